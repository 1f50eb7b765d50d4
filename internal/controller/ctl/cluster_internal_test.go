package ctl

import (
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

const twoContexts = `apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod
  cluster: {server: "https://prod.example:6443", certificate-authority-data: Zm9v}
- name: dev
  cluster: {server: "https://dev.example:6443", certificate-authority: /home/me/.minikube/ca.crt}
users:
- name: sa
  user: {token: s3cr3t-token}
- name: eks
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: aws, args: [eks, get-token]}
- name: files
  user: {client-certificate: /home/me/cert.pem, client-key: /home/me/key.pem}
contexts:
- name: prod
  context: {cluster: prod, user: sa}
- name: eks
  context: {cluster: prod, user: eks}
- name: dev
  context: {cluster: dev, user: files}
`

func TestRegistrationKubeconfig(t *testing.T) {
	out, err := RegistrationKubeconfig([]byte(twoContexts), "")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != "prod" || len(cfg.Contexts) != 1 || len(cfg.AuthInfos) != 1 || len(cfg.Clusters) != 1 || cfg.AuthInfos["sa"].Token != "s3cr3t-token" {
		t.Fatalf("kept %+v", cfg)
	}
	for _, tc := range []struct{ context, want string }{
		{"eks", `users["eks"].exec runs a program (aws)`},
		{"dev", `clusters["dev"].certificate-authority is a file path (/home/me/.minikube/ca.crt)`},
		{"dev", `users["files"].client-key is a file path (/home/me/key.pem)`},
		{"nope", `no context "nope" (contexts: dev, eks, prod)`},
	} {
		_, err := RegistrationKubeconfig([]byte(twoContexts), tc.context)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("context %s: %v, want %q", tc.context, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("the error leaks the token: %v", err)
		}
	}
}
