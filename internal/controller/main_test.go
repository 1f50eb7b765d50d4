package controller_test

import (
	"os"
	"testing"

	"github.com/convoy-sh/convoy/internal/controller/controllertest"
)

func TestMain(m *testing.M) { os.Exit(controllertest.Main(m)) }

// The helpers of controllertest under the names the tests use.
var (
	cluster          = controllertest.Cluster
	kube             = controllertest.Kube
	startController  = controllertest.StartController
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
	team             = controllertest.Team
	promotedStack    = controllertest.PromotedStack
	getPipeline      = controllertest.GetPipeline
	describePipeline = controllertest.DescribePipeline
	waitPipeline     = controllertest.WaitPipeline
	stageIs          = controllertest.StageIs
	scale            = controllertest.Scale
	dropFinalizers   = controllertest.DropFinalizers
)

const (
	testMinInterval = controllertest.MinInterval
	envChild        = controllertest.EnvChild
)
