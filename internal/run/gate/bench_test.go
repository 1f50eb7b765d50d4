package gate_test

import (
	"context"
	"fmt"
	"testing"
)

// The gate over 1000 objects (a large stage), passing and false
// for the last object (naming it evaluates the predicate per object).
func BenchmarkCELGate(b *testing.B) {
	objs := make([]map[string]any, 1000)
	for i := range objs {
		if i%2 == 0 {
			objs[i] = deployment("shop", fmt.Sprintf("d%d", i), 3, 3)
		} else {
			objs[i] = configMap("shop", fmt.Sprintf("c%d", i))
		}
	}
	c := compile(b, allAvailable)
	b.Run("true", func(b *testing.B) {
		for b.Loop() {
			if r := c.Eval(context.Background(), objs); !r.Passed {
				b.Fatal(r.Output)
			}
		}
	})
	bad := append(objs[:len(objs):len(objs)], deployment("shop", "last", 3, 1))
	b.Run("false", func(b *testing.B) {
		for b.Loop() {
			if r := c.Eval(context.Background(), bad); r.Passed {
				b.Fatal(r.Output)
			}
		}
	})
}
