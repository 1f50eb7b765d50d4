package addrs

import "testing"

func TestLabelValue(t *testing.T) {
	long := ""
	for range 70 {
		long += "x"
	}
	tests := []struct {
		addr ReleaseInstance
		want string
	}{
		{Release{"web"}.Instance(NoKey), "release.web"},
		{Release{"web"}.Instance(IntKey(2)), "release.web.2"},
		{Release{"web"}.Instance(StringKey("eu")), "release.web.k.eu"},
		{Release{"my_web-1"}.Instance(StringKey("a.b")), "release.my_web-1.k.a.b"},
	}
	for _, tt := range tests {
		if got := tt.addr.LabelValue(); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.addr, got, tt.want)
		}
		if !tt.addr.Release.LabelOf(tt.addr.LabelValue()) {
			t.Errorf("%s: LabelOf(%q) is false", tt.addr, tt.addr.LabelValue())
		}
	}
	for _, a := range []ReleaseInstance{
		Release{"web"}.Instance(StringKey("eu west")),
		Release{"web"}.Instance(StringKey(long)),
		Release{"web"}.Instance(StringKey("x-")),
	} {
		v := a.LabelValue()
		if len(v) != 42 || v[:2] != "h." {
			t.Errorf("%s: got %q, want a hash", a, v)
		}
	}
	if (Release{"web"}).LabelOf("release.webx") || (Release{"web"}).LabelOf("release.we") {
		t.Error("LabelOf matches another release")
	}
	if (Release{"web"}.Instance(StringKey("a b"))).LabelValue() == (Release{"web"}.Instance(StringKey("a c"))).LabelValue() {
		t.Error("hashed label values collide")
	}
}
