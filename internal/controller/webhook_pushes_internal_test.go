package controller

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// The push receiver's marks, as the Pipeline reconciler reads them: a
// listing that did not see the push keeps the mark, one that saw it
// clears it, and a push that came during the listing is kept.
func TestPipelinePushMarks(t *testing.T) {
	key := types.NamespacedName{Namespace: "apps", Name: "shop"}
	p := newPushes()
	marks := pipelinePushMarks{p}
	if saw, pushed := marks.Pipeline(key); pushed || saw != nil {
		t.Fatal("a mark before any push")
	}
	p.pushedPipeline(key, "1.1.0", "sha256:b")
	saw, pushed := marks.Pipeline(key)
	if !pushed {
		t.Fatal("no mark after a push")
	}
	saw("", []string{"1.0.0"}, "")
	if _, pushed := marks.Pipeline(key); !pushed {
		t.Fatal("a listing without the pushed tag cleared the mark")
	}
	saw("", []string{"1.0.0", "1.1.0"}, "")
	if _, pushed := marks.Pipeline(key); pushed {
		t.Fatal("a listing that saw the push kept the mark")
	}
	p.pushedPipeline(key, "1.1.0", "sha256:b")
	saw, _ = marks.Pipeline(key)
	p.pushedPipeline(key, "1.2.0", "sha256:c")
	saw("", []string{"1.1.0"}, "")
	if _, pushed := marks.Pipeline(key); !pushed {
		t.Fatal("a push during the listing was forgotten")
	}
}
