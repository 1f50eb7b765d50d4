package kube_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var cluster = devtest.New()

func TestMain(m *testing.M) { os.Exit(cluster.Run(m)) }

func newClient(t *testing.T) *kube.Client {
	t.Helper()
	cluster.Need(t)
	c, err := kube.New(cluster.RESTConfig(), kube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func parse(t *testing.T, c *kube.Client, ns string, manifest string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := c.Parse(manifest, ns)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return objs
}

func refs(objs []*unstructured.Unstructured) []kube.Ref {
	out := make([]kube.Ref, len(objs))
	for i, o := range objs {
		out[i] = kube.RefOf(o)
	}
	return out
}

// deployment renders a Deployment; podLabels are added to the pod template
// (the devcluster's failure-simulation labels go there).
func deployment(name string, replicas int, podLabels ...string) string {
	extra := ""
	for _, l := range podLabels {
		extra += "\n        " + l
	}
	return strings.NewReplacer("NAME", name, "REPLICAS", strconv.Itoa(replicas), "EXTRA", extra).Replace(`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: NAME
spec:
  replicas: REPLICAS
  selector:
    matchLabels:
      app: NAME
  template:
    metadata:
      labels:
        app: NAMEEXTRA
    spec:
      containers:
      - name: NAME
        image: registry.example/NAME:1
`)
}

func job(name string, podLabels ...string) string {
	extra := ""
	for _, l := range podLabels {
		extra += "\n        " + l
	}
	return strings.NewReplacer("NAME", name, "EXTRA", extra).Replace(`
apiVersion: batch/v1
kind: Job
metadata:
  name: NAME
spec:
  backoffLimit: 0
  template:
    metadata:
      labels:
        app: NAMEEXTRA
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: registry.example/NAME:1
`)
}

const (
	neverReady = `devcluster.convoy.dev/never-ready: "true"`
	fail       = `devcluster.convoy.dev/fail: "true"`
)
