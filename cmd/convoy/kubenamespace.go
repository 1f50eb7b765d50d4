package main

import (
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// namespace is the namespace a Stack command works in: -n, else the
// kubeconfig context's namespace, else "default" (as kubectl's).
func (f *kubeFlags) namespace(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f.Kubeconfig != "" {
		p, err := config.ExpandHome(f.Kubeconfig)
		if err != nil {
			return "", err
		}
		rules.ExplicitPath = p
	}
	ns, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: f.Context}).Namespace()
	if err != nil {
		return "", err
	}
	return ns, nil
}

// connect connects to the kubeconfig's cluster for a command on the
// controller's objects, and resolves its namespace as namespace does.
func (f *kubeFlags) connect(flag string) (client.Client, string, error) {
	c, err := ctl.Connect(f.Kubeconfig, f.Context)
	if err != nil {
		return nil, "", err
	}
	ns, err := f.namespace(flag)
	if err != nil {
		return nil, "", err
	}
	return c, ns, nil
}
