package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The ready CI files of docs/ci.md are run here as CI would run them,
// against the devcluster (docs/ci.md, "How they are tested"): the shell of
// every step or script that calls convoy plan or convoy apply runs, from a
// copy of the repository's root, with the built convoy on PATH and
// KUBECONFIG naming the devcluster; what is CI's own (checkout, installing
// convoy, the kubeconfig secret, posting the comment, uploading SARIF) is
// not run, and the files those parts read are checked instead.

// asConvoyEnv makes the test binary run as convoy (TestMain calls main).
const asConvoyEnv = "CONVOY_TEST_BINARY_AS_CONVOY"

// asConvoy returns a file named convoy that runs this test binary as
// convoy when asConvoyEnv is 1: the same code as the command, without
// linking it again (which takes minutes on a busy machine).
func asConvoy(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "convoy")
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// ciStack is release "a" of the app chart in namespace ns (its block on
// line 5) and a policy warning on Deployments of one replica; with deny,
// the values add a ConfigMap and a policy refuses new ConfigMaps.
func ciStack(ns string, deny bool) string {
	s := fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "a" {
  chart  = %[2]q
  values = [{ extraConfigMap = %[3]t }]
}
policy "two_replicas" {
  level     = "warn"
  condition = "object.kind != 'Deployment' || object.after == null || object.after.spec.replicas >= 2"
  message   = "a Deployment with fewer than two replicas"
}
`, ns, appChartPath(), deny)
	if deny {
		s += `policy "no_new_config" {
  level     = "deny"
  condition = "!(object.kind == 'ConfigMap' && object.action == 'create')"
  message   = "no new ConfigMaps"
}
`
	}
	return s
}

// ciJob runs one job of a CI file; it reports whether the job passed and
// the outputs its convoy steps wrote (GitHub's GITHUB_OUTPUT; nil for
// GitLab).
type ciJob func(t *testing.T, job string) (passed bool, outputs map[string]string)

// ciRepo is the repository's root a job runs in and the environment of
// its convoy steps.
type ciRepo struct {
	root string
	env  []string
}

func newCIRepo(t *testing.T, convoyBin string, stackDir, stack string) ciRepo {
	t.Helper()
	root := t.TempDir()
	writeCIStack(t, root, stackDir, stack)
	env := append(os.Environ(), asConvoyEnv+"=1",
		"PATH="+filepath.Dir(convoyBin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECONFIG="+cluster.Kubeconfig(),
		"TMPDIR="+t.TempDir(),
	)
	return ciRepo{root: root, env: env}
}

func writeCIStack(t *testing.T, root, stackDir, stack string) {
	t.Helper()
	dir := filepath.Join(root, stackDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(stack), 0o644); err != nil {
		t.Fatal(err)
	}
}

// clean removes what the last job left in the root, as a fresh checkout.
func (r ciRepo) clean(t *testing.T, files ...string) {
	for _, f := range files {
		if f == "" {
			continue
		}
		if err := os.Remove(filepath.Join(r.root, f)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

// shell runs script with the given shell command line; it reports whether
// it exited 0.
func (r ciRepo) shell(t *testing.T, argv []string, script string, env []string) bool {
	t.Helper()
	f := filepath.Join(t.TempDir(), "step.sh")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], append(argv[1:], f)...)
	cmd.Dir = r.root
	cmd.Env = append(append([]string{}, r.env...), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("%s\n%s(%v)", script, out, err)
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
		return false
	}
	return true
}

// convoyCommand matches a line that runs convoy plan or apply.
var convoyCommand = regexp.MustCompile(`(?m)(^|[\s;|&(])convoy (plan|apply)\b`)

// ghWorkflow is the part of a GitHub Actions workflow the test reads.
type ghWorkflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		If    string            `yaml:"if"`
		Env   map[string]string `yaml:"env"`
		Steps []ghStep          `yaml:"steps"`
	} `yaml:"jobs"`
}

type ghStep struct {
	ID   string            `yaml:"id"`
	Name string            `yaml:"name"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
	With map[string]string `yaml:"with"`
}

// stepOutput is the one `if:` a convoy step may carry: an output of an
// earlier step compared with a string.
var stepOutput = regexp.MustCompile(`^steps\.([\w-]+)\.outputs\.([\w-]+) == '([^']*)'$`)

// githubJob runs the convoy steps of a workflow's job as the runner
// would (bash -eo pipefail; GITHUB_OUTPUT, GITHUB_ENV,
// GITHUB_STEP_SUMMARY, RUNNER_TEMP), in order, until one fails.
func githubJob(wf ghWorkflow, r ciRepo) ciJob {
	return func(t *testing.T, name string) (bool, map[string]string) {
		t.Helper()
		job, ok := wf.Jobs[name]
		if !ok {
			t.Fatalf("the workflow has no job %q", name)
		}
		outputs := map[string]map[string]string{}
		all := map[string]string{}
		temp := t.TempDir()
		for _, st := range job.Steps {
			if !convoyCommand.MatchString(st.Run) {
				continue // CI's own
			}
			if st.If != "" {
				m := stepOutput.FindStringSubmatch(st.If)
				if m == nil {
					t.Fatalf("step %q: the test reads no condition %q", st.Name, st.If)
				}
				if outputs[m[1]][m[2]] != m[3] {
					continue
				}
			}
			var env []string
			for _, vars := range []map[string]string{wf.Env, job.Env, st.Env} {
				for k, v := range vars {
					if strings.Contains(v, "${{") {
						t.Fatalf("step %q: env %s=%s is CI's", st.Name, k, v)
					}
					env = append(env, k+"="+v)
				}
			}
			files := map[string]string{}
			for _, k := range []string{"GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_STEP_SUMMARY"} {
				files[k] = filepath.Join(t.TempDir(), strings.ToLower(k))
				env = append(env, k+"="+files[k])
			}
			env = append(env, "RUNNER_TEMP="+temp, "GITHUB_WORKSPACE="+r.root)
			passed := r.shell(t, []string{"bash", "--noprofile", "--norc", "-eo", "pipefail"}, st.Run, env)
			out := map[string]string{}
			if data, err := os.ReadFile(files["GITHUB_OUTPUT"]); err == nil {
				for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
					if k, v, ok := strings.Cut(l, "="); ok {
						out[k] = v
					}
				}
			}
			if st.ID != "" {
				outputs[st.ID] = out
			}
			maps.Copy(all, out)
			if !passed {
				return false, all
			}
		}
		return true, all
	}
}

// glCI is the part of a .gitlab-ci.yml the test reads.
type glCI struct {
	Variables map[string]string
	Jobs      map[string]glJob
}

type glJob struct {
	Extends   string            `yaml:"extends"`
	Variables map[string]string `yaml:"variables"`
	Rules     []struct {
		If string `yaml:"if"`
	} `yaml:"rules"`
	BeforeScript []string `yaml:"before_script"`
	Script       []string `yaml:"script"`
	AfterScript  []string `yaml:"after_script"`
	Artifacts    struct {
		When    string   `yaml:"when"`
		Paths   []string `yaml:"paths"`
		Reports struct {
			CodeQuality string `yaml:"codequality"`
		} `yaml:"reports"`
	} `yaml:"artifacts"`
}

func parseGitLabCI(t *testing.T, data []byte) glCI {
	t.Helper()
	var top map[string]yaml.Node
	if err := yaml.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	ci := glCI{Jobs: map[string]glJob{}}
	for k, n := range top {
		switch k {
		case "variables":
			if err := n.Decode(&ci.Variables); err != nil {
				t.Fatal(err)
			}
		case "stages", "default", "include", "workflow":
		default:
			var j glJob
			if err := n.Decode(&j); err != nil {
				t.Fatalf("job %s: %v", k, err)
			}
			ci.Jobs[k] = j
		}
	}
	return ci
}

// gitlabJob runs a job's script as a shell runner would (sh -e, the
// script's lines in order), with the global and the job's variables and
// CI_PROJECT_DIR; before_script (installing convoy) and after_script
// (posting the note) are CI's.
func gitlabJob(ci glCI, r ciRepo) ciJob {
	return func(t *testing.T, name string) (bool, map[string]string) {
		t.Helper()
		job, ok := ci.Jobs[name]
		if !ok {
			t.Fatalf("the CI file has no job %q", name)
		}
		if !convoyCommand.MatchString(strings.Join(job.Script, "\n")) {
			t.Fatalf("job %s runs no convoy command", name)
		}
		env := []string{"CI_PROJECT_DIR=" + r.root}
		for _, vars := range []map[string]string{ci.Variables, ci.Jobs[job.Extends].Variables, job.Variables} {
			for k, v := range vars {
				env = append(env, k+"="+v)
			}
		}
		return r.shell(t, []string{"sh", "-e"}, strings.Join(job.Script, "\n")+"\n", env), nil
	}
}

// ciFile reads a file of docs/ci.
func ciFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "ci", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkSARIF checks the SARIF file a job wrote: valid, with a result of
// rule at the stack file (relative to the repository's root) and line 5,
// release "a"'s block.
func checkSARIF(t *testing.T, path, stackFile, rule, level string) {
	t.Helper()
	doc := readSARIF(t, path)
	for _, res := range doc.Runs[0].Results {
		if res.RuleID != rule {
			continue
		}
		loc := res.Locations[0].PhysicalLocation
		if res.Level != level || loc.ArtifactLocation.URI != stackFile || loc.Region.StartLine != 5 {
			t.Errorf("%s: %+v", rule, res)
		}
		return
	}
	t.Errorf("%s holds no result of %s: %+v", path, rule, doc)
}

// checkMarkdown checks the plan comment a job wrote.
func checkMarkdown(t *testing.T, path string, want ...string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the plan comment: %v", err)
	}
	if !strings.HasPrefix(string(data), "### convoy plan: stack ") {
		t.Errorf("%s is not the markdown plan:\n%s", path, data)
	}
	for _, w := range want {
		if !strings.Contains(string(data), w) {
			t.Errorf("%s does not say %q:\n%s", path, w, data)
		}
	}
}

// checkApplied checks that release "a" is deployed as the stack says: a
// plan of it finds nothing to change.
func checkApplied(t *testing.T, stackDir string) {
	t.Helper()
	if code, out, errOut := runConvoy(t, "plan", "-C", stackDir, "--kubeconfig", cluster.Kubeconfig(), "--detailed-exitcode"); code != 0 {
		t.Errorf("after the merge job, a plan exits %d, want 0 (applied)\n%s\n%s", code, out, errOut)
	}
}

// The GitHub Actions workflow and the GitLab CI file of docs/ci.md: a pull
// request's plan passes with changes (exit 2) and leaves the markdown
// comment and the SARIF findings at stack.hcl:5; the merge job applies its
// saved plan; the next pull request's plan finds no change; a plan a
// policy denies fails the job, still leaving the comment and the findings
// (and, for GitLab, the Code Quality report), and the merge job applies
// nothing.
func TestCIFilesPlanAndApply(t *testing.T) {
	bin := asConvoy(t)

	t.Run("github-actions", func(t *testing.T) {
		var wf ghWorkflow
		if err := yaml.Unmarshal(ciFile(t, "github-actions.yml"), &wf); err != nil {
			t.Fatal(err)
		}
		stackDir := wf.Env["STACK_DIR"]
		if stackDir == "" {
			t.Fatal("the workflow sets no STACK_DIR")
		}
		ns := cluster.Namespace(t)
		r := newCIRepo(t, bin, stackDir, ciStack(ns, false))
		job := githubJob(wf, r)

		// What the CI's own steps read: the SARIF file and the comment's body.
		var sarifFile, bodyFile string
		for _, st := range wf.Jobs["plan"].Steps {
			if strings.HasPrefix(st.Uses, "github/codeql-action/upload-sarif@") {
				sarifFile = st.With["sarif_file"]
				if !strings.HasPrefix(st.If, "always()") {
					t.Errorf("the SARIF upload runs only when the plan passes: if %q", st.If)
				}
			}
			if m := regexp.MustCompile(`--body-file (\S+)`).FindStringSubmatch(st.Run); m != nil {
				bodyFile = m[1]
				if !strings.HasPrefix(st.If, "always()") {
					t.Errorf("the comment is posted only when the plan passes: if %q", st.If)
				}
			}
		}
		if sarifFile == "" || bodyFile == "" {
			t.Fatalf("the plan job uploads no SARIF (%q) or comments no file (%q)", sarifFile, bodyFile)
		}
		ciScenario(t, r, job, ns, stackDir, sarifFile, bodyFile, "", "plan", "apply")
	})

	t.Run("gitlab-ci", func(t *testing.T) {
		ci := parseGitLabCI(t, ciFile(t, "gitlab-ci.yml"))
		stackDir := ci.Variables["STACK_DIR"]
		if stackDir == "" {
			t.Fatal("the CI file sets no STACK_DIR")
		}
		ns := cluster.Namespace(t)
		r := newCIRepo(t, bin, stackDir, ciStack(ns, false))
		plan := ci.Jobs["convoy-plan"]
		if len(plan.Rules) == 0 || !strings.Contains(plan.Rules[0].If, "merge_request_event") {
			t.Errorf("convoy-plan does not run on merge requests: %+v", plan.Rules)
		}
		if a := ci.Jobs["convoy-apply"]; len(a.Rules) == 0 || !strings.Contains(a.Rules[0].If, "$CI_DEFAULT_BRANCH") {
			t.Errorf("convoy-apply does not run on the default branch: %+v", a.Rules)
		}
		if plan.Artifacts.When != "always" || plan.Artifacts.Reports.CodeQuality == "" || len(plan.Artifacts.Paths) != 2 {
			t.Fatalf("convoy-plan's artifacts: %+v", plan.Artifacts)
		}
		bodyFile, sarifFile := plan.Artifacts.Paths[0], plan.Artifacts.Paths[1]
		if !strings.Contains(strings.Join(plan.AfterScript, "\n"), "body@"+bodyFile) {
			t.Errorf("after_script posts no note of %s: %q", bodyFile, plan.AfterScript)
		}
		ciScenario(t, r, gitlabJob(ci, r), ns, stackDir, sarifFile, bodyFile, plan.Artifacts.Reports.CodeQuality, "convoy-plan", "convoy-apply")
	})
}

// ciScenario runs a CI file's plan and merge jobs through a pull request
// that installs release "a", a second one that changes nothing, and one a
// policy denies, in namespace ns. codeQuality is the Code Quality report the plan job
// leaves ("": none).
func ciScenario(t *testing.T, r ciRepo, job ciJob, ns, stackDir, sarifFile, bodyFile, codeQuality, planJob, applyJob string) {
	t.Helper()
	stackFile := stackDir + "/stack.hcl"
	dir := filepath.Join(r.root, stackDir)
	at := func(f string) string { return filepath.Join(r.root, f) }
	fresh := func() { r.clean(t, sarifFile, bodyFile, codeQuality) }

	// A pull request that installs release "a", with a policy warning.
	fresh()
	passed, out := job(t, planJob)
	if !passed {
		t.Fatalf("%s failed on a plan with changes", planJob)
	}
	if out != nil && out["exitcode"] != "2" {
		t.Errorf("%s's plan step output exitcode=%q, want 2", planJob, out["exitcode"])
	}
	checkSARIF(t, at(sarifFile), stackFile, "policy/two_replicas", "warning")
	checkMarkdown(t, at(bodyFile), "release.a", "two_replicas")
	if codeQuality != "" {
		checkCodeQuality(t, at(codeQuality), stackFile, "policy/two_replicas", "minor")
	}

	// Merged: the merge job plans, saves and applies.
	fresh()
	if passed, out := job(t, applyJob); !passed {
		t.Fatalf("%s failed", applyJob)
	} else if out != nil && out["exitcode"] != "2" {
		t.Errorf("%s's plan step output exitcode=%q, want 2", applyJob, out["exitcode"])
	}
	checkApplied(t, dir)

	// The next pull request changes nothing.
	fresh()
	if passed, out := job(t, planJob); !passed {
		t.Fatalf("%s failed on a plan without changes", planJob)
	} else if out != nil && out["exitcode"] != "0" {
		t.Errorf("%s's plan step output exitcode=%q, want 0", planJob, out["exitcode"])
	}
	checkMarkdown(t, at(bodyFile))

	// A pull request a policy denies: the job fails, and what the comment
	// and the code scanning read is there all the same.
	writeCIStack(t, r.root, stackDir, ciStack(ns, true))
	fresh()
	if passed, _ := job(t, planJob); passed {
		t.Fatalf("%s passed a plan a policy denies", planJob)
	}
	checkSARIF(t, at(sarifFile), stackFile, "policy/no_new_config", "error")
	checkMarkdown(t, at(bodyFile), "no_new_config")
	if codeQuality != "" {
		checkCodeQuality(t, at(codeQuality), stackFile, "policy/no_new_config", "major")
	}
	// Merged all the same: the merge job fails and applies nothing.
	fresh()
	if passed, _ := job(t, applyJob); passed {
		t.Fatalf("%s passed a plan a policy denies", applyJob)
	}
	if code, _, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--detailed-exitcode", "--allow-policy", "no_new_config"); code != 2 {
		t.Errorf("after the denied merge job, the plan exits %d, want 2 (nothing applied)\n%s", code, errOut)
	}
}

// checkCodeQuality checks GitLab's Code Quality report: a JSON array whose
// entry of rule is at the stack file and line 5 with the severity.
func checkCodeQuality(t *testing.T, path, stackFile, rule, severity string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the Code Quality report: %v", err)
	}
	var issues []struct {
		Description, Fingerprint, Severity string
		CheckName                          string `json:"check_name"`
		Location                           struct {
			Path  string
			Lines struct{ Begin int }
		}
	}
	if err := json.Unmarshal(data, &issues); err != nil {
		t.Fatalf("the Code Quality report is not a JSON array: %v\n%s", err, data)
	}
	for _, i := range issues {
		if i.CheckName != rule {
			continue
		}
		if i.Location.Path != stackFile || i.Location.Lines.Begin != 5 || i.Severity != severity || i.Fingerprint == "" || i.Description == "" {
			t.Errorf("%s: %+v", rule, i)
		}
		return
	}
	t.Errorf("the Code Quality report holds no %s:\n%s", rule, data)
}
