//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// ciOutcome is what a reporting pipeline of docs/ci.md is run to show: the
// scene it runs on, the steps that fail on the finding (exit 1), and what
// its annotations and report files must hold.
type ciOutcome struct {
	scene func(t *testing.T)
	// fails maps a job to the step that exits 1 on the finding (a GitHub
	// step's name; for GitLab, the job's own name).
	fails map[string]string
	// annotations checks the standard output of a step printing -o github.
	annotations func(t *testing.T, stdout string)
	// reports check the report files, by the name the pipeline gives
	// them (upload-sarif's sarif_file, artifacts:reports:junit).
	reports map[string]func(t *testing.T, w *ciWorkspace, data string)
	// checks is how many annotations and reports must have been checked.
	checks int
}

// ciOutcomes are the reporting pipelines' outcomes, on a scene where an
// autoscaler owns web's replicas, which deploy/web.yaml sets: predict's
// apply conflicts on the replicas: line of deploy/web.yaml, and owners
// finds the replicas drifted from the pipeline's manager in the dump.
var ciOutcomes = map[string]ciOutcome{
	"github-pr": {
		scene: autoscaleCIWeb,
		fails: map[string]string{"predict": "Predict, as annotations on the changed lines"},
		annotations: func(t *testing.T, stdout string) {
			want := fmt.Sprintf(`::error file=deploy/web.yaml,line=%d,col=3,title=apply conflict%%3A Deployment/%s/web apply::apply conflicts on .spec.replicas, owned by "hpa-controller" with subresource "scale"`,
				lineOf(t, ciDeploy, "  replicas:"), ciNamespace)
			if !strings.Contains(stdout, want) {
				t.Errorf("-o github prints no annotation at the replicas: line of deploy/web.yaml: want\n%s", want)
			}
		},
		reports: map[string]func(*testing.T, *ciWorkspace, string){
			"predict.sarif": func(t *testing.T, _ *ciWorkspace, data string) {
				if got, want := sarifResultLine(t, data, "predict/apply-conflict", "deploy/web.yaml"), lineOf(t, ciDeploy, "  replicas:"); got != want {
					t.Errorf("predict.sarif: the apply conflict is at deploy/web.yaml line %d, want %d", got, want)
				}
			},
		},
		checks: 2,
	},
	"gitlab-mr": {
		scene: autoscaleCIWeb,
		fails: map[string]string{"predict": "predict", "drift": "drift"},
		reports: map[string]func(*testing.T, *ciWorkspace, string){
			"predict-junit.xml": func(t *testing.T, _ *ciWorkspace, data string) {
				text := fmt.Sprintf("deploy/web.yaml:%d:3: error: apply conflicts on .spec.replicas", lineOf(t, ciDeploy, "  replicas:"))
				if !junitHasFailure(t, data, "predict/apply-conflict", text) {
					t.Errorf("predict-junit.xml holds no failure %q", text)
				}
			},
			"owners-junit.xml": func(t *testing.T, w *ciWorkspace, data string) {
				live, err := os.ReadFile(filepath.Join(w.dir, "repo", "live.yaml"))
				if err != nil {
					t.Fatalf("the drift job's live.yaml: %v", err)
				}
				// kubectl get TYPE prints a List: the spec's replicas is the
				// first line at its indentation (the status's comes after).
				text := fmt.Sprintf(`live.yaml:%d:5: error: .spec.replicas is owned by hpa-controller (Update/scale), not by "ci-shop"`, lineOf(t, string(live), "    replicas:"))
				if !junitHasFailure(t, data, "owners/drift", text) {
					t.Errorf("owners-junit.xml holds no failure %q", text)
				}
			},
		},
		checks: 2,
	},
}

// autoscaleCIWeb has an HPA-like manager set web's replicas through /scale,
// as a HorizontalPodAutoscaler does: it owns .spec.replicas from then on.
func autoscaleCIWeb(t *testing.T) {
	t.Helper()
	dyn := cluster.Dynamic(t, "hpa-controller")
	if _, err := dyn.Resource(deploymentsGVR).Namespace(ciNamespace).Patch(context.Background(), "web", types.MergePatchType,
		[]byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{FieldManager: "hpa-controller"}, "scale"); err != nil {
		t.Fatalf("patch %s/web /scale: %v", ciNamespace, err)
	}
	waitScaled(t, deploymentsGVR, ciNamespace, "web")
}

// gitlabJob is what the test reads of a .gitlab-ci.yml job.
type gitlabJob struct {
	Stage        string            `json:"stage"`
	Variables    map[string]string `json:"variables"`
	BeforeScript []string          `json:"before_script"`
	Script       []string          `json:"script"`
	AllowFailure bool              `json:"allow_failure"`
	Artifacts    struct {
		When    string `json:"when"`
		Reports struct {
			JUnit any `json:"junit"`
		} `json:"reports"`
	} `json:"artifacts"`
}

// gitlabKeywords are the top-level keys of a .gitlab-ci.yml that are not
// jobs.
var gitlabKeywords = map[string]bool{"stages": true, "variables": true, "default": true, "workflow": true, "include": true, "image": true}

// runGitLab runs a .gitlab-ci.yml's jobs, stage by stage, as a GitLab
// runner with the bash shell does: before_script and script in one
// bash -eo pipefail, with the global and the job's variables. A job may
// fail only where the pipeline's outcome says (exit 1); its
// artifacts:reports:junit files are then read only with when: always, as
// GitLab uploads them, and checked.
func (w *ciWorkspace) runGitLab(t *testing.T, b ciBlock) {
	var top map[string]any
	if err := yaml.Unmarshal([]byte(b.body), &top); err != nil {
		t.Fatalf("docs/ci.md:%d: %v", b.line, err)
	}
	var cfg struct {
		Stages    []string             `json:"stages"`
		Variables map[string]string    `json:"variables"`
		Jobs      map[string]gitlabJob `json:"-"`
	}
	if err := yaml.Unmarshal([]byte(b.body), &cfg); err != nil {
		t.Fatalf("docs/ci.md:%d: %v", b.line, err)
	}
	cfg.Jobs = map[string]gitlabJob{}
	for name, v := range top {
		if gitlabKeywords[name] || strings.HasPrefix(name, ".") {
			continue
		}
		js, err := yaml.Marshal(v)
		var job gitlabJob
		if err == nil {
			err = yaml.Unmarshal(js, &job)
		}
		if err != nil || len(job.Script) == 0 {
			t.Fatalf("docs/ci.md:%d: job %s: %v (a job needs a script)", b.line, name, err)
		}
		if !slices.Contains(cfg.Stages, job.Stage) {
			t.Fatalf("docs/ci.md:%d: job %s: stage %q is not in stages %v", b.line, name, job.Stage, cfg.Stages)
		}
		cfg.Jobs[name] = job
	}
	if len(cfg.Jobs) == 0 {
		t.Fatalf("docs/ci.md:%d: a .gitlab-ci.yml without jobs", b.line)
	}
	for _, stage := range cfg.Stages {
		for _, name := range slices.Sorted(maps.Keys(cfg.Jobs)) {
			if job := cfg.Jobs[name]; job.Stage == stage {
				w.runGitLabJob(t, fmt.Sprintf("docs/ci.md:%d job %s", b.line, name), name, cfg.Variables, job)
			}
		}
	}
}

func (w *ciWorkspace) runGitLabJob(t *testing.T, where, name string, vars map[string]string, job gitlabJob) {
	t.Helper()
	env := slices.Clone(w.env)
	for _, m := range []map[string]string{vars, job.Variables} {
		for k, v := range m {
			env = append(env, k+"="+v)
		}
	}
	script := strings.Join(append(slices.Clone(job.BeforeScript), job.Script...), "\n") + "\n"
	_, stderr, err := w.exec(t, where, script, env, "bash", "--noprofile", "--norc", "-eo", "pipefail")
	w.expectExit(t, where, name, name, err, stderr)
	var reports []string
	switch r := job.Artifacts.Reports.JUnit.(type) {
	case nil:
	case string:
		reports = []string{r}
	case []any:
		for _, f := range r {
			reports = append(reports, fmt.Sprint(f))
		}
	default:
		t.Fatalf("%s: artifacts:reports:junit is %T, want a file or a list of files", where, r)
	}
	for _, f := range reports {
		if err != nil && job.Artifacts.When != "always" {
			t.Errorf("%s failed, and GitLab keeps %s only with artifacts:when: always", where, f)
			continue
		}
		data, rerr := os.ReadFile(filepath.Join(w.dir, "repo", f))
		if rerr != nil {
			t.Fatalf("%s: its JUnit report: %v", where, rerr)
		}
		w.checkReport(t, where, f, string(data))
	}
}
