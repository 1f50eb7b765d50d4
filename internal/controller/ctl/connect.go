package ctl

import (
	"fmt"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/run"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// NewScheme is the scheme of the controller and the CLI's Stack commands:
// the built-in types and convoy.dev/v1alpha1.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// RestConfig is the client configuration of a kubeconfig and context
// ("": $KUBECONFIG, ~/.kube/config, else the in-cluster config).
func RestConfig(kubeconfig, context string) (*rest.Config, error) {
	cfg, err := run.LoadKubeconfig(kubeconfig, context)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, nil
}

// ParseSecretRef parses NAMESPACE/NAME.
func ParseSecretRef(s string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("%q: want NAMESPACE/NAME", s)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// DefaultMinInterval is the shortest interval a Stack or Pipeline is
// reconciled at (--min-interval), and the minimum the CRDs' schema
// accepts unless installed with another (convoy controller install
// --min-interval).
const DefaultMinInterval = time.Minute
