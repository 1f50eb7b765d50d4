package release

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestKubeDriversKeepRecords(t *testing.T) {
	for _, tt := range []struct {
		kind StorageDriver
		name string
	}{
		{DriverSecret, "Secret"},
		{DriverConfigMap, "ConfigMap"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			client := newRecordServer()
			d := NewKubeDriver(client, tt.kind, "ns")
			if d.Name() != tt.name {
				t.Fatalf("name %q", d.Name())
			}
			s := &Storage{Driver: d}
			for _, r := range []*Release{rec("api", 1, StatusSuperseded), rec("api", 2, StatusDeployed), rec("web", 1, StatusDeployed)} {
				if err := s.Create(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Create(ctx, rec("api", 2, StatusFailed)); !errors.Is(err, ErrReleaseExists) {
				t.Fatalf("creating an existing revision: %v", err)
			}
			h, err := s.History(ctx, "api")
			if err != nil || !reflect.DeepEqual(versions(h), []int{1, 2}) {
				t.Fatalf("history %v, %v", versions(h), err)
			}
			h[1].Info.Status = StatusFailed
			if err := s.Update(ctx, h[1]); err != nil {
				t.Fatal(err)
			}
			if got, err := s.Get(ctx, "api", 2); err != nil || got.Info.Status != StatusFailed || got.createdAt == "" {
				t.Fatalf("after update: %+v %v", got, err)
			}
			if err := s.Delete(ctx, "api", 1); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(ctx, "api", 1); !errors.Is(err, ErrReleaseNotFound) {
				t.Fatalf("deleting a deleted revision: %v", err)
			}
			if _, err := s.Get(ctx, "api", 1); !errors.Is(err, ErrReleaseNotFound) {
				t.Fatalf("getting a deleted revision: %v", err)
			}
		})
	}
}

func TestSecretDriverIgnoresOtherSecrets(t *testing.T) {
	ctx := context.Background()
	other := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "lookalike", Namespace: "ns", Labels: map[string]string{"name": "api", "owner": "helm"}},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"release": []byte("not a record")},
	}
	s := &Storage{Driver: NewKubeDriver(fake.NewClientset(other), DriverSecret, "ns")}
	if err := s.Create(ctx, rec("api", 1, StatusDeployed)); err != nil {
		t.Fatal(err)
	}
	h, err := s.History(ctx, "api")
	if err != nil || !reflect.DeepEqual(versions(h), []int{1}) {
		t.Fatalf("history %v, %v", versions(h), err)
	}
}

func TestKubeDriversRefuseAnUpdateOfAStaleRead(t *testing.T) {
	for _, tt := range []struct {
		kind StorageDriver
		name string
	}{
		{DriverSecret, "Secret"},
		{DriverConfigMap, "ConfigMap"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s := &Storage{Driver: NewKubeDriver(newRecordServer(), tt.kind, "ns")}
			if err := s.Create(ctx, rec("web", 14, StatusPendingUpgrade)); err != nil {
				t.Fatal(err)
			}
			mine, _ := s.Get(ctx, "web", 14)
			theirs, _ := s.Get(ctx, "web", 14)
			// Another run marks the revision failed...
			theirs.Info.Status = StatusFailed
			if err := s.Update(ctx, theirs); err != nil {
				t.Fatal(err)
			}
			// ...and this one, resuming with what it read before, may not
			// overwrite that.
			mine.Info.Status = StatusDeployed
			err := s.Update(ctx, mine)
			want := "v1 " + tt.name + " ns/sh.helm.release.v1.web.v14: "
			if !errors.Is(err, ErrRecordChanged) || !apierrors.IsConflict(err) || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("got %v, want a conflict naming %s", err, want)
			}
			if got, _ := s.Get(ctx, "web", 14); got.Info.Status != StatusFailed {
				t.Fatalf("the record says %s, want the other run's failed", got.Info.Status)
			}
			// Read again, it may be written: each write is conditional on
			// the one before it.
			again, _ := s.Get(ctx, "web", 14)
			again.Info.Description = "first"
			if err := s.Update(ctx, again); err != nil {
				t.Fatal(err)
			}
			again.Info.Description = "second"
			if err := s.Update(ctx, again); err != nil {
				t.Fatalf("an update after this run's own update: %v", err)
			}
		})
	}
}

// The authorizer's refusal of a record read (a Stack's identity reading
// the records of a namespace it may not: kube-system, another team's) is
// a *kube.ForbiddenError naming who may not do what, once, not the API
// server's text.
func TestRecordReadRefusedIsForbidden(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("list", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "",
			errors.New(`User "system:serviceaccount:team-a:deployer" cannot list resource "secrets" in API group "" in the namespace "kube-system"`))
	})
	client.PrependReactor("get", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "sh.helm.release.v1.app.v1",
			errors.New(`User "system:serviceaccount:team-a:deployer" cannot get resource "secrets" in API group "" in the namespace "kube-system"`))
	})
	s := &Storage{Driver: NewKubeDriver(client, DriverSecret, "kube-system")}
	const want = "serviceaccount team-a/deployer may not list secrets in namespace kube-system"
	_, err := s.History(context.Background(), "app")
	var fe *kube.ForbiddenError
	if !errors.As(err, &fe) || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), "cannot list") {
		t.Errorf("History: %v, want a *kube.ForbiddenError ending %q", err, want)
	}
	_, err = s.Get(context.Background(), "app", 1)
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "v1 Secret kube-system/sh.helm.release.v1.app.v1: serviceaccount team-a/deployer may not get secrets in namespace kube-system") {
		t.Errorf("Get: %v, want the record named, and a *kube.ForbiddenError", err)
	}
}
