package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/agentrun/agentrun/runner"
)

// k8sObject is the part of a Kubernetes manifest the tests read.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		k8sJobSpec              `yaml:",inline"`
		ConcurrencyPolicy       string `yaml:"concurrencyPolicy"`
		StartingDeadlineSeconds *int   `yaml:"startingDeadlineSeconds"`
		JobTemplate             struct {
			Spec k8sJobSpec `yaml:"spec"`
		} `yaml:"jobTemplate"`
	} `yaml:"spec"`
}

type k8sJobSpec struct {
	CompletionMode       string `yaml:"completionMode"`
	Completions          *int   `yaml:"completions"`
	Parallelism          *int   `yaml:"parallelism"`
	BackoffLimitPerIndex *int   `yaml:"backoffLimitPerIndex"`
	PodFailurePolicy     *struct {
		Rules []struct {
			Action      string `yaml:"action"`
			OnExitCodes *struct {
				ContainerName string `yaml:"containerName"`
				Operator      string `yaml:"operator"`
				Values        []int  `yaml:"values"`
			} `yaml:"onExitCodes"`
		} `yaml:"rules"`
	} `yaml:"podFailurePolicy"`
	Template struct {
		Spec struct {
			RestartPolicy  string         `yaml:"restartPolicy"`
			InitContainers []k8sContainer `yaml:"initContainers"`
			Containers     []k8sContainer `yaml:"containers"`
			Volumes        []struct {
				Name                  string     `yaml:"name"`
				PersistentVolumeClaim *yaml.Node `yaml:"persistentVolumeClaim"`
			} `yaml:"volumes"`
		} `yaml:"spec"`
	} `yaml:"template"`
}

type k8sContainer struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

// invocations returns the agentrun commands a container runs: its args after the
// image's entrypoint (tini -- agentrun) when it keeps it, else agentrun commands inside
// its command and args.
func (c k8sContainer) invocations(where string) []deployInvocation {
	if len(c.Command) == 0 && strings.Contains(c.Image, "agentrun") && len(c.Args) > 0 {
		return []deployInvocation{{where: where, sub: c.Args[0], flags: flagNames(strings.Join(c.Args[1:], " "))}}
	}
	return shellInvocations(where, strings.Join(append(slices.Clone(c.Command), c.Args...), " "))
}

// flagValue returns the value after --name in args.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// retriesNot reports whether the pod failure policy fails (the index or the Job)
// without retrying when container exits with code.
func (j k8sJobSpec) retriesNot(container string, code int) bool {
	if j.PodFailurePolicy == nil {
		return false
	}
	for _, r := range j.PodFailurePolicy.Rules {
		e := r.OnExitCodes
		if e != nil && (r.Action == "FailIndex" || r.Action == "FailJob") && e.Operator == "In" &&
			(e.ContainerName == "" || e.ContainerName == container) && slices.Contains(e.Values, code) {
			return true
		}
	}
	return false
}

// k8sExpansion is a $(VAR) reference that Kubernetes expands in args.
var k8sExpansion = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// checkJob checks the pods of a Job (or a CronJob's job template) and returns the
// agentrun container that runs `agentrun run`, if any.
func checkJob(t *testing.T, where string, j k8sJobSpec) (*k8sContainer, []deployInvocation) {
	t.Helper()
	pod := j.Template.Spec
	assert.Equal(t, "Never", pod.RestartPolicy, "%s: a pod failure policy needs restartPolicy Never", where)
	claims := map[string]bool{}
	for _, v := range pod.Volumes {
		claims[v.Name] = v.PersistentVolumeClaim != nil
	}
	var run *k8sContainer
	var invs []deployInvocation
	all := append(slices.Clone(pod.InitContainers), pod.Containers...)
	for i, c := range all {
		cinvs := c.invocations(where + " container " + c.Name)
		invs = append(invs, cinvs...)
		if len(cinvs) == 0 {
			continue
		}
		defined := map[string]bool{}
		for _, e := range c.Env {
			defined[e.Name] = true
		}
		for _, a := range c.Args {
			for _, m := range k8sExpansion.FindAllStringSubmatch(a, -1) {
				assert.True(t, defined[m[1]], "%s: $(%s) is not in the container's env", where, m[1])
			}
		}
		// Results go to a volume that outlives the pod.
		out := flagValue(c.Args, "out")
		require.NotEmpty(t, out, "%s: container %s sets no --out", where, c.Name)
		onClaim := false
		for _, m := range c.VolumeMounts {
			onClaim = onClaim || claims[m.Name] && strings.HasPrefix(out, strings.TrimSuffix(m.MountPath, "/")+"/")
		}
		assert.True(t, onClaim, "%s: --out %s is not on a persistent volume", where, out)
		if cinvs[0].sub == "run" {
			run = &all[i]
		}
	}
	return run, invs
}

// TestKubernetesExamples checks the manifests in examples/kubernetes: the Indexed Job
// runs one shard per index with the total agentrun needs, retries each index but not
// a spec error (exit code 2), and writes to a persistent volume; the CronJob never
// overlaps itself; every agentrun command names flags that exist.
func TestKubernetesExamples(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(repoRoot, "examples", "kubernetes", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var indexed, cron int
	var invs []deployInvocation
	for _, file := range files {
		f, err := os.Open(file)
		require.NoError(t, err)
		dec := yaml.NewDecoder(f)
		for n := 0; ; n++ {
			var obj k8sObject
			err := dec.Decode(&obj)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "%s document %d", file, n)
			where := filepath.Base(file) + " " + obj.Kind + " " + obj.Metadata.Name
			switch obj.Kind {
			case "Job":
				run, jinvs := checkJob(t, where, obj.Spec.k8sJobSpec)
				invs = append(invs, jinvs...)
				if obj.Spec.CompletionMode != "Indexed" {
					continue
				}
				indexed++
				require.NotNil(t, run, "%s runs no agentrun run", where)
				require.NotNil(t, obj.Spec.Completions, where)
				assert.NotNil(t, obj.Spec.Parallelism, "%s: set parallelism", where)
				assert.NotNil(t, obj.Spec.BackoffLimitPerIndex, "%s: retry each index on its own", where)
				assert.True(t, obj.Spec.retriesNot(run.Name, exitUsage), "%s: exit code 2 must fail the index, not retry it", where)
				total := ""
				for _, e := range run.Env {
					if e.Name == "AGENTRUN_SHARD_TOTAL" {
						total = e.Value
					}
				}
				assert.Equal(t, strconv.Itoa(*obj.Spec.Completions), total, "%s: AGENTRUN_SHARD_TOTAL must equal completions", where)
			case "CronJob":
				cron++
				run, jinvs := checkJob(t, where, obj.Spec.JobTemplate.Spec)
				invs = append(invs, jinvs...)
				require.NotNil(t, run, "%s runs no agentrun run", where)
				assert.Equal(t, "Forbid", obj.Spec.ConcurrencyPolicy, where)
				require.NotNil(t, obj.Spec.StartingDeadlineSeconds, "%s: set startingDeadlineSeconds", where)
				assert.Positive(t, *obj.Spec.StartingDeadlineSeconds, where)
				assert.True(t, obj.Spec.JobTemplate.Spec.retriesNot(run.Name, exitUsage), "%s: exit code 2 (spec error, locked output) must not be retried", where)
			}
		}
		require.NoError(t, f.Close())
	}
	assert.Equal(t, 1, indexed, "one Indexed Job")
	assert.Equal(t, 1, cron, "one CronJob")
	var subs []string
	for _, inv := range invs {
		subs = append(subs, inv.sub)
	}
	assert.Subset(t, subs, []string{"run", "merge"})
	checkInvocations(t, invs)
}

// TestShardFromEnvironment runs agentrun in-process with the shard in the environment,
// as an Indexed Job pod or a matrix leg does, and reads the shard back from run.json.
func TestShardFromEnvironment(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		env      []string
		args     []string
		want     *runner.Shard
		wantCode int
		wantErr  string
	}{
		"AGENTRUN_SHARD":        {env: []string{"AGENTRUN_SHARD=1/4"}, want: &runner.Shard{Index: 1, Total: 4}, wantCode: exitOK},
		"Indexed Job":           {env: []string{"JOB_COMPLETION_INDEX=3", "AGENTRUN_SHARD_TOTAL=4"}, want: &runner.Shard{Index: 3, Total: 4}, wantCode: exitOK},
		"flag over environment": {env: []string{"AGENTRUN_SHARD=1/4"}, args: []string{"--shard", "0/4"}, want: &runner.Shard{Index: 0, Total: 4}, wantCode: exitFailed},
		"index without total":   {env: []string{"JOB_COMPLETION_INDEX=3"}, wantCode: exitUsage, wantErr: "AGENTRUN_SHARD_TOTAL"},
		"index past total":      {env: []string{"JOB_COMPLETION_INDEX=4", "AGENTRUN_SHARD_TOTAL=4"}, wantCode: exitUsage, wantErr: "0 <= I < N"},
		"no shard":              {wantCode: exitFailed},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			spec := filepath.Join(dir, "jobs.yaml")
			require.NoError(t, os.WriteFile(spec, []byte(deploySpec), 0o644))
			out := filepath.Join(dir, "out")
			var stdout, stderr bytes.Buffer
			app := &App{Stdout: &stdout, Stderr: &stderr,
				Env: append([]string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}, tt.env...)}
			code := app.Main(context.Background(), append([]string{"run", spec, "--out", out, "--progress", "off"}, tt.args...))
			require.Equal(t, tt.wantCode, code, "stderr: %s", stderr.String())
			if tt.wantErr != "" {
				assert.Contains(t, stderr.String(), tt.wantErr)
				assert.NoDirExists(t, out)
				return
			}
			var info runner.RunInfo
			b, err := os.ReadFile(filepath.Join(out, runner.RunFile))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &info))
			assert.Equal(t, tt.want, info.Shard)
			assert.Equal(t, 4, info.SessionsTotal)
		})
	}
}
