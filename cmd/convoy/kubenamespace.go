package main

import (
	"github.com/convoy-sh/convoy/internal/config"
	"k8s.io/client-go/tools/clientcmd"
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
