package stack_test

import (
	"os"
	"testing"

	"github.com/convoy-sh/convoy/internal/controller/controllertest"
)

// TestMain runs the Stack integration tests against the devcluster
// (controllertest), in a test binary of their own: they run alongside
// internal/controller's.
func TestMain(m *testing.M) { os.Exit(controllertest.Main(m)) }

// The helpers of controllertest under the names the tests use.
var (
	cluster          = controllertest.Cluster
	kube             = controllertest.Kube
	startController  = controllertest.StartController
	dropFinalizers   = controllertest.DropFinalizers
	appChart         = controllertest.AppChart
	stackDir         = controllertest.StackDir
	push             = controllertest.Push
	newStack         = controllertest.NewStack
	create           = controllertest.Create
	getStack         = controllertest.GetStack
	update           = controllertest.Update
	cond             = controllertest.Cond
	describe         = controllertest.Describe
	waitStack        = controllertest.WaitStack
	waitReconciles   = controllertest.WaitReconciles
	isCond           = controllertest.IsCond
	revisionsOf      = controllertest.RevisionsOf
	configMessage    = controllertest.ConfigMessage
	replicas         = controllertest.Replicas
	scale            = controllertest.Scale
	team             = controllertest.Team
	describePipeline = controllertest.DescribePipeline
	waitPipeline     = controllertest.WaitPipeline
	stageIs          = controllertest.StageIs
	dockerConfig     = controllertest.DockerConfig
	dockerSecret     = controllertest.DockerSecret
	get              = controllertest.Get
)

// hook records the JSON documents posted to it.
type hook = controllertest.Hook

const (
	testMinInterval = controllertest.MinInterval
)
