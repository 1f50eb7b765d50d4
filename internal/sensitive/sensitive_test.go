package sensitive

import (
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"testing"
)

func TestFieldsMatchTheObject(t *testing.T) {
	f := Fields{}
	f.Add("", "ConfigMap", "", "cfg", []string{"data.a"})
	f.Add("", "ConfigMap", "other", "cfg", []string{"data.b"})
	if got := f.Of("", "ConfigMap", "shop", "cfg"); !reflect.DeepEqual(got, []string{"data.a"}) {
		t.Fatalf("shop: %v", got)
	}
	if got := f.Of("", "ConfigMap", "other", "cfg"); !reflect.DeepEqual(got, []string{"data.a", "data.b"}) {
		t.Fatalf("other: %v", got)
	}
	if got := f.Of("apps", "ConfigMap", "shop", "cfg"); got != nil {
		t.Fatalf("another group: %v", got)
	}
	r := New([]string{"hunter22"}).WithFields(f)
	if got := r.FieldsOf("", "ConfigMap", "shop", "cfg"); !reflect.DeepEqual(got, []string{"data.a"}) || !r.Is("hunter22") {
		t.Fatalf("WithFields lost fields or values: %v", got)
	}
}

func TestRedactor(t *testing.T) {
	r := New([]string{"hunter22", "on", ""}, []string{"hunter22"})
	for _, tc := range []struct {
		name string
		got  any
		want any
	}{
		{"text", r.Text("pw=hunter22;"), "pw=(sensitive);"},
		{"base64 in text", r.Text("data: aHVudGVyMjI="), "data: (sensitive)"},
		{"short values only whole", r.Text("only on"), "only on"},
		{"a whole short value", r.Value("on"), Placeholder},
		{"keys are never masked", r.Value(map[string]any{"hunter22": []any{"hunter22", 1}}), map[string]any{"hunter22": []any{Placeholder, 1}}},
		{"holds inside", r.Holds(map[string]any{"a": []any{"x-hunter22-y"}}), true},
		{"holds not", r.Holds(map[string]any{"a": "hunter2"}), false},
		{"values", r.Values(), []string{"hunter22", "on"}},
		{"with more", r.With([]string{"canary-x"}).Text("hunter22 canary-x"), "(sensitive) (sensitive)"},
		{"nil masks nothing", (*Redactor)(nil).Text("hunter22"), "hunter22"},
		{"nil holds nothing", (*Redactor)(nil).Holds("hunter22"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !reflect.DeepEqual(tc.got, tc.want) {
				t.Fatalf("got %#v, want %#v", tc.got, tc.want)
			}
		})
	}
}

func TestErrMasksAndUnwraps(t *testing.T) {
	r := New([]string{"hunter22"})
	base := &fs.PathError{Op: "open", Path: "/x/hunter22", Err: fs.ErrNotExist}
	err := r.Err(base)
	if strings.Contains(err.Error(), "hunter22") || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("masked error %q does not unwrap or still leaks", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe != base {
		t.Fatal("errors.As does not reach the original")
	}
	plain := errors.New("nothing secret")
	if r.Err(plain) != plain || r.Err(nil) != nil || (*Redactor)(nil).Err(plain) != plain {
		t.Fatal("an error without sensitive values was wrapped")
	}
}

// Keys and names that merely contain a short sensitive value stay
// readable; the value is masked where it stands alone (issue: a SOPS
// adminUser "admin" turned adminPassword into "(sensitive)Password").
func TestShortValuesAreMaskedOnlyAsWords(t *testing.T) {
	r := New([]string{"admin", "mess", "a-long-secret-value"})
	for in, want := range map[string]string{
		"adminPassword: (sensitive)":          "adminPassword: (sensitive)",
		"data.admin-password":                 "data.admin-password",
		"app.kubernetes.io/name: my-admin-ui": "app.kubernetes.io/name: my-admin-ui",
		"+ message: hello":                    "+ message: hello",
		"+ adminUser: admin":                  "+ adminUser: (sensitive)",
		`user="admin"`:                        `user="(sensitive)"`,
		"postgres://admin:x@db/app":           "postgres://(sensitive):x@db/app",
		"admin":                               "(sensitive)",
		"token=xa-long-secret-valuex":         "token=x(sensitive)x",
		"YWRtaW4= is admin in base64":         "(sensitive) is (sensitive) in base64",
	} {
		if got := r.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	if r.Holds("my-admin-ui") || !r.Holds("admin") || !r.Holds("x admin y") || !r.Holds("xa-long-secret-valuex") {
		t.Error("Holds does not follow the word rule")
	}
	if got := r.Weak(); got != 2 {
		t.Errorf("Weak() = %d, want 2 (admin, mess)", got)
	}
}
