package plan

import "strings"

// HookObject is one object a release's hooks apply, with every event it
// runs for in this plan (HookRun lists a hook once per event).
type HookObject struct {
	Ref ObjectRef
	// Name, Kind and Path are the hook's, as HookRun's.
	Name, Kind, Path string
	// Events are the hook events it runs for, comma-separated
	// ("pre-install", "pre-upgrade,post-upgrade").
	Events string
	// Object is the rendered object, masked (nil in a saved plan).
	Object map[string]any
}

// HookObjects are the objects of runs, each once, in the order they first
// run; hooks whose manifest could not be read (no Ref) are left out.
func HookObjects(runs []HookRun) []HookObject {
	var out []HookObject
	at := map[ObjectRef]int{}
	for _, h := range runs {
		if h.Ref == (ObjectRef{}) {
			continue
		}
		if i, ok := at[h.Ref]; ok {
			out[i].Events += "," + strings.Join(h.Events, ",")
			continue
		}
		at[h.Ref] = len(out)
		out = append(out, HookObject{Ref: h.Ref, Name: h.Name, Kind: h.Kind, Path: h.Path, Events: strings.Join(h.Events, ","), Object: h.Object})
	}
	return out
}
