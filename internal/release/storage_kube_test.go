package release

import (
	"context"
	"errors"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
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
			client := fake.NewClientset()
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
