package release

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
)

// SecretType is the type of Helm's record Secrets.
const SecretType = "helm.sh/release.v1"

// NewKubeDriver returns the driver that keeps the records of namespace in
// objects of the given kind: Secrets (Helm's default driver) or ConfigMaps
// (Helm's "configmap" driver). With namespace "" it lists across all
// namespaces (read only).
func NewKubeDriver(client kubernetes.Interface, kind StorageDriver, namespace string) Driver {
	if kind == DriverConfigMap {
		return newKubeDriver(configMapRecords{}, client, namespace)
	}
	return newKubeDriver(secretRecords{}, client, namespace)
}

// recordClient is what a driver uses of the typed client of its kind:
// T is the object, L the list.
type recordClient[T, L any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// recordKind is how records are kept in one kind of object.
type recordKind[T metav1.Object, L any] interface {
	kind() string
	client(c kubernetes.Interface, namespace string) recordClient[T, L]
	items(list L) []T
	// payload is the encoded release an object holds; false when the
	// object is not a release record.
	payload(obj T) (string, bool)
	object(meta metav1.ObjectMeta, payload string) T
}

// kubeDriver stores records as objects of one kind in one namespace.
type kubeDriver[T metav1.Object, L any] struct {
	records   recordKind[T, L]
	client    recordClient[T, L]
	namespace string
}

func newKubeDriver[T metav1.Object, L any](records recordKind[T, L], client kubernetes.Interface, namespace string) *kubeDriver[T, L] {
	return &kubeDriver[T, L]{records: records, client: records.client(client, namespace), namespace: namespace}
}

// Name implements Driver.
func (d *kubeDriver[T, L]) Name() string { return d.records.kind() }

// wrap names the record object in err.
func (d *kubeDriver[T, L]) wrap(namespace, key string, err error) error {
	return fmt.Errorf("v1 %s %s/%s: %w", d.records.kind(), namespace, key, kube.Forbidden(err))
}

func (d *kubeDriver[T, L]) read(obj T) (*Release, error) {
	payload, _ := d.records.payload(obj)
	r, err := decode(payload)
	if err != nil {
		return nil, d.wrap(obj.GetNamespace(), obj.GetName(), err)
	}
	r.fromObjectLabels(obj.GetLabels())
	r.Annotations = obj.GetAnnotations()
	r.resourceVersion = obj.GetResourceVersion()
	r.rewritten = payloadRewritten(obj.GetManagedFields())
	return r, nil
}

// get reads the record object of key; ErrReleaseNotFound when there is
// none.
func (d *kubeDriver[T, L]) get(ctx context.Context, key string) (T, error) {
	obj, err := d.client.Get(ctx, key, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return obj, ErrReleaseNotFound
	}
	if err != nil {
		return obj, d.wrap(d.namespace, key, err)
	}
	return obj, nil
}

// Get implements Driver.
func (d *kubeDriver[T, L]) Get(ctx context.Context, key string) (*Release, error) {
	obj, err := d.get(ctx, key)
	if err != nil {
		return nil, err
	}
	return d.read(obj)
}

// payload implements payloadReader.
func (d *kubeDriver[T, L]) payload(ctx context.Context, key string) (string, string, error) {
	obj, err := d.get(ctx, key)
	if err != nil {
		return "", "", err
	}
	payload, _ := d.records.payload(obj)
	return payload, obj.GetResourceVersion(), nil
}

// List implements Driver.
func (d *kubeDriver[T, L]) List(ctx context.Context, selector map[string]string) ([]*Release, error) {
	list, err := d.client.List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(selector).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("list release records in namespace %q: %w", d.namespace, kube.Forbidden(err))
	}
	items := d.records.items(list)
	out := make([]*Release, 0, len(items))
	for _, obj := range items {
		if _, ok := d.records.payload(obj); !ok {
			continue
		}
		r, err := d.read(obj)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (d *kubeDriver[T, L]) object(key string, r *Release, w recordWrite) (T, error) {
	payload, err := r.encoded()
	if err != nil {
		var zero T
		return zero, fmt.Errorf("encode release %s: %w", r.Name, err)
	}
	meta := metav1.ObjectMeta{Name: key, Namespace: d.namespace, Labels: recordLabels(r, time.Now(), w), Annotations: maps.Clone(r.Annotations)}
	return d.records.object(meta, payload), nil
}

// Create implements Driver.
func (d *kubeDriver[T, L]) Create(ctx context.Context, key string, r *Release) error {
	obj, err := d.object(key, r, recordCreate)
	if err != nil {
		return err
	}
	created, err := d.client.Create(ctx, obj, metav1.CreateOptions{FieldManager: RecordFieldManager})
	if apierrors.IsAlreadyExists(err) {
		return ErrReleaseExists
	}
	if err != nil {
		return d.wrap(d.namespace, key, err)
	}
	r.resourceVersion = created.GetResourceVersion()
	return nil
}

// Update implements Driver.
func (d *kubeDriver[T, L]) Update(ctx context.Context, key string, r *Release) error {
	if r.resourceVersion == "" {
		// An update without the version it read would overwrite whatever
		// is there: not a record write convoy makes.
		return d.wrap(d.namespace, key, fmt.Errorf("release %s revision %d was not read from its record: not updated", r.Name, r.Version))
	}
	obj, err := d.object(key, r, recordUpdate)
	if err != nil {
		return err
	}
	// The precondition: the record is as it was read.
	obj.SetResourceVersion(r.resourceVersion)
	updated, err := d.client.Update(ctx, obj, metav1.UpdateOptions{FieldManager: RecordFieldManager})
	if apierrors.IsConflict(err) {
		return d.wrap(d.namespace, key, fmt.Errorf("%w (read at resourceVersion %s): %w", ErrRecordChanged, r.resourceVersion, err))
	}
	if err != nil {
		return d.wrap(d.namespace, key, err)
	}
	r.resourceVersion = updated.GetResourceVersion()
	return nil
}

// Delete implements Driver.
func (d *kubeDriver[T, L]) Delete(ctx context.Context, key string) error {
	err := d.client.Delete(ctx, key, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return ErrReleaseNotFound
	}
	if err != nil {
		return d.wrap(d.namespace, key, err)
	}
	return nil
}

// secretRecords keeps records in Secrets of type SecretType; Secrets of
// other types are not records.
type secretRecords struct{}

func (secretRecords) kind() string { return "Secret" }

func (secretRecords) client(c kubernetes.Interface, namespace string) recordClient[*corev1.Secret, *corev1.SecretList] {
	return c.CoreV1().Secrets(namespace)
}

func (secretRecords) items(list *corev1.SecretList) []*corev1.Secret { return pointers(list.Items) }

func (secretRecords) payload(obj *corev1.Secret) (string, bool) {
	return string(obj.Data["release"]), obj.Type == SecretType
}

func (secretRecords) object(meta metav1.ObjectMeta, payload string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: meta, Type: SecretType, Data: map[string][]byte{"release": []byte(payload)}}
}

// configMapRecords keeps records in ConfigMaps.
type configMapRecords struct{}

func (configMapRecords) kind() string { return "ConfigMap" }

func (configMapRecords) client(c kubernetes.Interface, namespace string) recordClient[*corev1.ConfigMap, *corev1.ConfigMapList] {
	return c.CoreV1().ConfigMaps(namespace)
}

func (configMapRecords) items(list *corev1.ConfigMapList) []*corev1.ConfigMap {
	return pointers(list.Items)
}

func (configMapRecords) payload(obj *corev1.ConfigMap) (string, bool) {
	return obj.Data["release"], true
}

func (configMapRecords) object(meta metav1.ObjectMeta, payload string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"release": payload}}
}

func pointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// lazyRecord is a record whose payload is decoded only when asked.
type lazyRecord struct {
	name      string // the record object's (set by listPaged)
	labels    map[string]string
	namespace string
	decode    func() (*Release, error)
}

// lazyLister lists records without decoding them (kubeDriver).
type lazyLister interface {
	listLazy(ctx context.Context, selector map[string]string) ([]lazyRecord, error)
}

// lazyRecords is the engine's driver of a namespace as a lazyLister
// (NewKubeDriver's drivers all are), or the engine's Metadata when it has
// one: records' labels from the cache, each payload read by a GET when
// decoded.
func (e *Engine) lazyRecords(namespace string) lazyLister {
	if e.sql != nil {
		return e.sql.Driver(namespace).(lazyLister)
	}
	d := NewKubeDriver(e.client, e.driver, namespace)
	if e.metadata != nil {
		return cachedRecords{e: e, namespace: namespace, driver: d}
	}
	return d.(lazyLister)
}

// cachedRecords lists records' metadata from the engine's Metadata, and
// reads a record's payload with a GET of that record when it is decoded;
// it lists through the driver what the cache does not serve.
type cachedRecords struct {
	e         *Engine
	namespace string
	driver    Driver
}

// listLazy implements lazyLister.
func (c cachedRecords) listLazy(ctx context.Context, selector map[string]string) ([]lazyRecord, error) {
	gvr, fields := c.e.recordResource()
	items, ok := c.e.metadata.ListMetadata(ctx, gvr, c.namespace, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(selector).String(), FieldSelector: fields})
	if !ok {
		return c.driver.(lazyLister).listLazy(ctx, selector)
	}
	out := make([]lazyRecord, 0, len(items))
	for _, o := range items {
		drv, name := c.driver, o.Name
		if c.namespace == "" {
			drv = NewKubeDriver(c.e.client, c.e.driver, o.Namespace)
		}
		out = append(out, lazyRecord{labels: o.Labels, namespace: o.Namespace, decode: func() (*Release, error) { return drv.Get(ctx, name) }})
	}
	return out, nil
}

// recordResource is the resource the engine's records are kept in, and the
// field selector that tells records from other objects of it.
func (e *Engine) recordResource() (schema.GroupVersionResource, string) {
	if e.driver == DriverConfigMap {
		return schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, ""
	}
	return schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, "type=" + SecretType
}

// listLazy implements lazyLister.
func (d *kubeDriver[T, L]) listLazy(ctx context.Context, selector map[string]string) ([]lazyRecord, error) {
	list, err := d.client.List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(selector).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("list release records in namespace %q: %w", d.namespace, kube.Forbidden(err))
	}
	var out []lazyRecord
	for _, obj := range d.records.items(list) {
		if _, ok := d.records.payload(obj); !ok {
			continue
		}
		out = append(out, lazyRecord{labels: obj.GetLabels(), namespace: obj.GetNamespace(), decode: func() (*Release, error) { return d.read(obj) }})
	}
	return out, nil
}
