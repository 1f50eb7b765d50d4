package v1alpha1_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
)

// One Stack whose spec does not decode (written before the CRD's schema
// checked it) does not fail the list: it carries its decode error, and
// its other fields and the other Stacks decode.
func TestABadStackDoesNotFailTheList(t *testing.T) {
	list := `{"items": [
	  {"metadata": {"name": "good"}, "spec": {"source": "oci://r/s:v1", "interval": "1m"}},
	  {"metadata": {"name": "bad"}, "spec": {"source": "oci://r/s:v2", "interval": "five minutes", "suspend": "yes", "vars": {"a": "b"}}}
	]}`
	var l v1alpha1.StackList
	if err := json.Unmarshal([]byte(list), &l); err != nil {
		t.Fatal(err)
	}
	good, bad := l.Items[0].Spec, l.Items[1].Spec
	if good.DecodeError() != nil || good.IntervalOrDefault().Duration != time.Minute {
		t.Errorf("good: %v, interval %v", good.DecodeError(), good.IntervalOrDefault())
	}
	want := `spec.interval: time: invalid duration "five minutes"; spec.suspend: "yes" is not a boolean`
	if err := bad.DecodeError(); err == nil || err.Error() != want {
		t.Errorf("bad: %v\nwant %s", err, want)
	}
	if bad.Source != "oci://r/s:v2" || bad.Vars["a"] != "b" || bad.Interval != nil {
		t.Errorf("bad: the fields that decode are lost: %+v", bad)
	}
	if c := l.Items[1].DeepCopy(); c.Spec.DecodeError() == nil {
		t.Error("a copy loses the decode error")
	}
}
