package planner_test

import (
	"os"
	"testing"

	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planfile"
	"github.com/convoy-sh/convoy/internal/run"
)

var cluster = devtest.New()

func TestMain(m *testing.M) { os.Exit(cluster.Run(m)) }

// writePlan saves a plan as convoy plan --out does (mode 0600).
func writePlan(path string, p *plan.Plan) error {
	b, err := planfile.Encode(&planfile.File{Plan: p})
	if err != nil {
		return err
	}
	return run.WritePlanFile(path, b)
}

// readPlan reads a plan saved by writePlan.
func readPlan(path string) (*plan.Plan, error) {
	f, err := run.ReadPlanFile(path)
	if err != nil {
		return nil, err
	}
	return f.Plan, nil
}
