package plan

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// ImpactSummary totals the impact of a plan's releases.
type ImpactSummary struct {
	// Rollouts counts the workloads that roll, Pods their pods.
	Rollouts, Pods int
	StaleConfig    int
	DataLoss       int
	Replacements   int
	Unknown        int
	// ScaledToZero counts the workloads whose pods all stop.
	ScaledToZero int
	// Requests are the stack's totals over the releases that change.
	Requests Resources
}

// ImpactSummary totals the impact of the plan's releases.
func (p *Plan) ImpactSummary() ImpactSummary {
	var s ImpactSummary
	var cpu, mem [2]resource.Quantity
	for _, r := range p.Releases {
		imp := r.Impact
		if imp == nil {
			continue
		}
		s.Rollouts += len(imp.Rollouts)
		for _, ro := range imp.Rollouts {
			s.Pods += ro.Replicas
		}
		s.StaleConfig += len(imp.StaleConfig)
		s.DataLoss += len(imp.DataLoss)
		s.Replacements += len(imp.Replacements)
		s.Unknown += len(imp.Unknown)
		s.ScaledToZero += len(imp.ScaledToZero)
		if q := imp.Requests; q != nil {
			addQuantity(&cpu[0], q.CPU.Before)
			addQuantity(&cpu[1], q.CPU.After)
			addQuantity(&mem[0], q.Memory.Before)
			addQuantity(&mem[1], q.Memory.After)
		}
	}
	s.Requests = Resources{CPU: Quantities{Before: canonical(cpu[0]), After: canonical(cpu[1])}, Memory: Quantities{Before: canonical(mem[0]), After: canonical(mem[1])}}
	return s
}

func addQuantity(to *resource.Quantity, s string) {
	if q, err := resource.ParseQuantity(s); err == nil {
		to.Add(q)
	}
}

// String is the plan's impact on one line ("" when there is none):
// "Impact: 2 workloads roll (6 pods), 1 config change not picked up,
// requests +600m CPU."
func (s ImpactSummary) String() string {
	var parts []string
	if s.Rollouts > 0 {
		parts = append(parts, fmt.Sprintf("%d %s (%d %s)", s.Rollouts, plural(s.Rollouts, "workload rolls", "workloads roll"), s.Pods, plural(s.Pods, "pod", "pods")))
	}
	if s.ScaledToZero > 0 {
		parts = append(parts, fmt.Sprintf("%d %s to 0", s.ScaledToZero, plural(s.ScaledToZero, "workload scales", "workloads scale")))
	}
	if s.Replacements > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", s.Replacements, plural(s.Replacements, "object replaced", "objects replaced")))
	}
	if s.StaleConfig > 0 {
		parts = append(parts, fmt.Sprintf("%d config %s not picked up without a restart", s.StaleConfig, plural(s.StaleConfig, "change", "changes")))
	}
	if s.DataLoss > 0 {
		parts = append(parts, fmt.Sprintf("%d %s data", s.DataLoss, plural(s.DataLoss, "object loses", "objects lose")))
	}
	if s.Unknown > 0 {
		parts = append(parts, fmt.Sprintf("%d %s of unknown impact", s.Unknown, plural(s.Unknown, "object", "objects")))
	}
	if d := s.Requests.Deltas(); d != "" {
		parts = append(parts, "requests "+d)
	}
	if len(parts) == 0 {
		return ""
	}
	return "Impact: " + strings.Join(parts, ", ") + "."
}

// Deltas are the changes of the totals: "+600m CPU, +128Mi memory" (""
// when none).
func (r *Resources) Deltas() string {
	if r == nil {
		return ""
	}
	var parts []string
	if d := r.CPU.Delta(); d != "" {
		parts = append(parts, d+" CPU")
	}
	if d := r.Memory.Delta(); d != "" {
		parts = append(parts, d+" memory")
	}
	return strings.Join(parts, ", ")
}
