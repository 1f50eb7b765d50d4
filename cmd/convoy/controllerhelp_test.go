package main

import (
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/deploy"
	"sigs.k8s.io/yaml"
)

// convoy controller install --help names every CRD it installs, by the
// name in its manifest, and the kind.
func TestControllerInstallHelpNamesEveryCRD(t *testing.T) {
	code, out, errOut := runConvoy(t, "controller", "install", "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	short := newControllerInstallCmd(streams{}).Short
	for _, doc := range [][]byte{deploy.CRD, deploy.PipelineCRD, deploy.StackSetCRD} {
		var crd struct {
			Metadata struct{ Name string }
			Spec     struct{ Names struct{ Kind string } }
		}
		if err := yaml.Unmarshal(doc, &crd); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, crd.Metadata.Name) || !strings.Contains(out, crd.Spec.Names.Kind) {
			t.Errorf("convoy controller install --help does not name %s (%s):\n%s", crd.Metadata.Name, crd.Spec.Names.Kind, out)
		}
		if !strings.Contains(short, crd.Spec.Names.Kind) {
			t.Errorf("the one-line help %q does not name the %s CRD", short, crd.Spec.Names.Kind)
		}
	}
}

// --tenancy's help says what strict does, and that the cache of pulled
// artifacts stays shared (internal/controller/stack/tenancy.go; issue 55,
// item 11: it said "cached per namespace").
func TestControllerTenancyHelp(t *testing.T) {
	f := newControllerCmd(streams{}).Flags().Lookup("tenancy")
	if f == nil {
		t.Fatal("no --tenancy flag")
	}
	if strings.Contains(f.Usage, "per namespace") || !strings.Contains(f.Usage, "stays shared") || !strings.Contains(f.Usage, "Pipeline") {
		t.Errorf("--tenancy: %q", f.Usage)
	}
}
