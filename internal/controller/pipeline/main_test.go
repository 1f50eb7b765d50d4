package pipeline_test

import (
	"os"
	"testing"

	"github.com/convoy-sh/convoy/internal/controller/controllertest"
)

// TestMain runs the Pipeline integration tests against the devcluster
// (controllertest), in a test binary of their own: they run alongside
// internal/controller's.
func TestMain(m *testing.M) { os.Exit(controllertest.Main(m)) }

// The helpers of controllertest under the names the tests use.
var (
	cluster          = controllertest.Cluster
	kube             = controllertest.Kube
	startController  = controllertest.StartController
	dropFinalizers   = controllertest.DropFinalizers
	stackDir         = controllertest.StackDir
	push             = controllertest.Push
	newStack         = controllertest.NewStack
	create           = controllertest.Create
	getStack         = controllertest.GetStack
	cond             = controllertest.Cond
	describe         = controllertest.Describe
	waitStack        = controllertest.WaitStack
	isCond           = controllertest.IsCond
	team             = controllertest.Team
	promotedStack    = controllertest.PromotedStack
	getPipeline      = controllertest.GetPipeline
	describePipeline = controllertest.DescribePipeline
	waitPipeline     = controllertest.WaitPipeline
	stageIs          = controllertest.StageIs
	get              = controllertest.Get
)
