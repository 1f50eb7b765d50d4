package release_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestRecordMetadataAgreesWithRecords: the histories a plan reads from the
// records' metadata (pages of two) hold the revisions, statuses, labels and
// annotations the records whole hold, with both of Helm's drivers; a
// record whose payload is read (LoadRecord) is the record Histories
// decodes; Secrets that are not records are left out, and a record without
// Helm's name and version labels is read whole to know what it is. The
// list of a namespace's deployed records (ListDeployedRecords) holds what
// LoadRecord reads of each, and no other record.
func TestRecordMetadataAgreesWithRecords(t *testing.T) {
	for _, tt := range []struct {
		name   string
		driver release.StorageDriver
	}{{"Secret", release.DriverSecret}, {"ConfigMap", release.DriverConfigMap}} {
		t.Run(tt.name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			ctx := context.Background()
			eng, err := release.NewEngine(ctx, cluster.RESTConfig(), release.EngineOptions{Driver: tt.driver, Kube: kube.Options{ListPageSize: 2}})
			if err != nil {
				t.Fatal(err)
			}
			store := eng.Storage(ns)
			record := func(name string, version int, status release.Status, labels, annotations map[string]string) {
				t.Helper()
				r := &release.Release{
					Name: name, Namespace: ns, Version: version,
					Info:     &release.Info{Status: status, LastDeployed: time.Unix(1700000000, 0).UTC()},
					Config:   map[string]any{"replicas": float64(version)},
					Manifest: "---\n# Source: x/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n",
					Labels:   labels, Annotations: annotations,
				}
				if err := store.Create(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			record("api", 1, release.StatusSuperseded, nil, nil)
			record("api", 2, release.StatusDeployed, map[string]string{release.FingerprintLabel: "f2", release.StackLabel: "shop"}, map[string]string{release.ObjectsAnnotation: `[]`})
			record("web", 1, release.StatusDeployed, nil, nil)
			record("db", 1, release.StatusDeployed, nil, nil)
			record("db", 2, release.StatusFailed, nil, nil)
			// db's newest record loses Helm's name and version labels.
			unlabel := []byte(`{"metadata":{"labels":{"name":null,"version":null}}}`)
			if tt.driver == release.DriverSecret {
				_, err = cluster.Client().CoreV1().Secrets(ns).Patch(ctx, "sh.helm.release.v1.db.v2", types.MergePatchType, unlabel, metav1.PatchOptions{})
				if err == nil {
					// A Secret labelled as a record but of another type.
					_, err = cluster.Client().CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
						ObjectMeta: metav1.ObjectMeta{Name: "lookalike", Labels: map[string]string{"owner": "helm", "name": "api", "version": "9", "status": "deployed"}},
						Type:       corev1.SecretTypeOpaque,
					}, metav1.CreateOptions{})
				}
			} else {
				_, err = cluster.Client().CoreV1().ConfigMaps(ns).Patch(ctx, "sh.helm.release.v1.db.v2", types.MergePatchType, unlabel, metav1.PatchOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}

			items, err := eng.ListRecordMeta(ctx, ns)
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != 5 {
				t.Fatalf("listed %d records' metadata, want 5", len(items))
			}
			meta, err := eng.HistoriesOfMeta(ctx, ns, items)
			if err != nil {
				t.Fatal(err)
			}
			whole, err := eng.Histories(ctx, ns)
			if err != nil {
				t.Fatal(err)
			}
			if len(meta) != 3 || len(whole) != 3 {
				t.Fatalf("releases: %d from metadata, %d from records, want 3", len(meta), len(whole))
			}
			for name, w := range whole {
				m := meta[name]
				if len(m) != len(w) {
					t.Fatalf("%s: %d revisions from metadata, %d from records", name, len(m), len(w))
				}
				for i := range w {
					if m[i].Version != w[i].Version || m[i].Info.Status != w[i].Info.Status || m[i].Namespace != ns ||
						!reflect.DeepEqual(m[i].Labels, w[i].Labels) || !reflect.DeepEqual(orNil(m[i].Annotations), orNil(w[i].Annotations)) {
						t.Fatalf("%s revision %d: from metadata %+v (labels %v, annotations %v); from the record %+v (labels %v, annotations %v)",
							name, w[i].Version, *m[i].Info, m[i].Labels, m[i].Annotations, *w[i].Info, w[i].Labels, w[i].Annotations)
					}
					unlabelled := name == "db" && w[i].Version == 2
					if m[i].Partial() == unlabelled {
						t.Fatalf("%s revision %d: partial %v (only a record without name and version labels is read whole)", name, w[i].Version, m[i].Partial())
					}
					if i != len(w)-1 && w[i].Info.Status != release.StatusDeployed {
						continue // Histories decodes the newest and the deployed one
					}
					full, err := eng.LoadRecord(ctx, m[i])
					if err != nil {
						t.Fatal(err)
					}
					if full.Partial() || full.Manifest != w[i].Manifest || !reflect.DeepEqual(full.Config, w[i].Config) ||
						!full.Info.LastDeployed.Equal(w[i].Info.LastDeployed) || !reflect.DeepEqual(full.Labels, w[i].Labels) {
						t.Fatalf("%s revision %d read whole: %+v, want %+v", name, w[i].Version, full, w[i])
					}
				}
			}

			// The deployed records read with one list (pages of two) are
			// the records LoadRecord reads, and only they: no other
			// status, no Secret of another type.
			listed, err := eng.ListDeployedRecords(ctx, ns)
			if err != nil {
				t.Fatal(err)
			}
			if listed.Len() != 3 {
				t.Fatalf("listed %d deployed records, want 3 (api 2, web 1, db 1)", listed.Len())
			}
			for name, m := range meta {
				for _, r := range m {
					got, ok, err := listed.Load(r)
					if err != nil {
						t.Fatal(err)
					}
					if deployed := r.Info.Status == release.StatusDeployed; ok != deployed {
						t.Fatalf("%s revision %d (%s): in the list of deployed records: %v", name, r.Version, r.Info.Status, ok)
					}
					if !ok {
						continue
					}
					want, err := eng.LoadRecord(ctx, r)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s revision %d from the list: %+v, want what LoadRecord reads: %+v", name, r.Version, got, want)
					}
				}
			}
		})
	}
}

func orNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
