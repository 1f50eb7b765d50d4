package release

import (
	"errors"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// recordServer is the fake clientset with what the record drivers rely on
// the API server for and the fake lacks: every Secret and ConfigMap it
// writes gets a new resourceVersion, and an update whose resourceVersion
// is not the stored one is refused with a Conflict (one without any is
// unconditional, as the API server allows for these kinds). Without it, a test of
// the drivers' update precondition could not fail.
type recordServer struct {
	*fake.Clientset
	mu sync.Mutex
	n  int
}

func newRecordServer(objs ...runtime.Object) *recordServer {
	s := &recordServer{Clientset: fake.NewClientset(objs...)}
	for _, resource := range []string{"secrets", "configmaps"} {
		s.PrependReactor("create", resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
			obj := a.(k8stesting.CreateAction).GetObject().DeepCopyObject()
			m, _ := meta.Accessor(obj)
			m.SetResourceVersion(s.next())
			if err := s.Tracker().Create(a.GetResource(), obj, a.GetNamespace()); err != nil {
				return true, nil, err
			}
			return true, obj.DeepCopyObject(), nil
		})
		s.PrependReactor("update", resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
			obj := a.(k8stesting.UpdateAction).GetObject().DeepCopyObject()
			m, _ := meta.Accessor(obj)
			cur, err := s.Tracker().Get(a.GetResource(), a.GetNamespace(), m.GetName())
			if err != nil {
				return true, nil, err
			}
			cm, _ := meta.Accessor(cur)
			// As the API server: Secrets and ConfigMaps allow an update
			// without a resourceVersion, unconditional.
			if rv := m.GetResourceVersion(); rv != "" && rv != cm.GetResourceVersion() {
				return true, nil, apierrors.NewConflict(a.GetResource().GroupResource(), m.GetName(),
					errors.New("the object has been modified; please apply your changes to the latest version and try again"))
			}
			m.SetResourceVersion(s.next())
			if err := s.Tracker().Update(a.GetResource(), obj, a.GetNamespace()); err != nil {
				return true, nil, err
			}
			return true, obj.DeepCopyObject(), nil
		})
	}
	return s
}

func (s *recordServer) next() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return strconv.Itoa(s.n)
}
