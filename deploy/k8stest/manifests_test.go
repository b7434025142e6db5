package k8stest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

// manifestDir holds the manifests under test.
const manifestDir = "../../examples/kubernetes"

// pod is a pod template of a manifest.
type pod struct {
	where string
	meta  metav1.ObjectMeta
	spec  corev1.PodSpec
}

// readManifests decodes every document of every manifest strictly (unknown and
// duplicate fields are errors) into its k8s.io/api type and returns the pod templates.
func readManifests(t *testing.T) (pods []pod, kinds []string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for n := 0; ; n++ {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "%s document %d", file, n)
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			var tm metav1.TypeMeta
			require.NoError(t, yaml.Unmarshal(doc, &tm), "%s document %d", file, n)
			where := filepath.Base(file) + " " + tm.Kind
			kinds = append(kinds, tm.APIVersion+" "+tm.Kind)
			switch tm.APIVersion + " " + tm.Kind {
			case "batch/v1 Job":
				var job batchv1.Job
				require.NoError(t, yaml.UnmarshalStrict(doc, &job), where)
				pods = append(pods, pod{where + " " + job.Name, job.Spec.Template.ObjectMeta, job.Spec.Template.Spec})
			case "batch/v1 CronJob":
				var cron batchv1.CronJob
				require.NoError(t, yaml.UnmarshalStrict(doc, &cron), where)
				tmpl := cron.Spec.JobTemplate.Spec.Template
				pods = append(pods, pod{where + " " + cron.Name, tmpl.ObjectMeta, tmpl.Spec})
			case "v1 PersistentVolumeClaim":
				var pvc corev1.PersistentVolumeClaim
				require.NoError(t, yaml.UnmarshalStrict(doc, &pvc), where)
			default:
				t.Fatalf("%s: no test knows %s %s", where, tm.APIVersion, tm.Kind)
			}
		}
	}
	return pods, kinds
}

// restricted evaluates the Pod Security policy "restricted", latest version, with the
// default checks, and returns the reasons a pod is forbidden.
func restricted(t *testing.T, p pod) []string {
	t.Helper()
	ev, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	require.NoError(t, err)
	lv := psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}
	var reasons []string
	for _, r := range ev.EvaluatePod(lv, &p.meta, &p.spec) {
		if !r.Allowed {
			reasons = append(reasons, r.ForbiddenReason+": "+r.ForbiddenDetail)
		}
	}
	return reasons
}

func TestManifestsDecodeStrictly(t *testing.T) {
	pods, kinds := readManifests(t)
	assert.ElementsMatch(t, []string{"v1 PersistentVolumeClaim", "batch/v1 Job", "batch/v1 Job", "batch/v1 CronJob"}, kinds)
	assert.Len(t, pods, 3)
}

func TestManifestsPodSecurityRestricted(t *testing.T) {
	pods, _ := readManifests(t)
	for _, p := range pods {
		t.Run(p.where, func(t *testing.T) {
			assert.Empty(t, restricted(t, p))
		})
	}
}

// TestManifestsHardening checks what Pod Security does not require but the examples
// promise: no service account token, resource requests and limits, a read-only root
// file system with emptyDirs for HOME and /tmp.
func TestManifestsHardening(t *testing.T) {
	pods, _ := readManifests(t)
	for _, p := range pods {
		t.Run(p.where, func(t *testing.T) {
			s := p.spec
			require.NotNil(t, s.AutomountServiceAccountToken, "automountServiceAccountToken")
			assert.False(t, *s.AutomountServiceAccountToken)
			require.NotNil(t, s.SecurityContext)
			require.NotNil(t, s.SecurityContext.SeccompProfile)
			assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, s.SecurityContext.SeccompProfile.Type)
			emptyDirs := map[string]bool{}
			for _, v := range s.Volumes {
				emptyDirs[v.Name] = v.EmptyDir != nil
			}
			for _, c := range append(append([]corev1.Container{}, s.InitContainers...), s.Containers...) {
				where := "container " + c.Name
				for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
					assert.Contains(t, c.Resources.Requests, r, "%s: request %s", where, r)
				}
				assert.Contains(t, c.Resources.Limits, corev1.ResourceMemory, "%s: memory limit", where)
				sc := c.SecurityContext
				require.NotNil(t, sc, where)
				require.NotNil(t, sc.ReadOnlyRootFilesystem, where)
				assert.True(t, *sc.ReadOnlyRootFilesystem, "%s: readOnlyRootFilesystem", where)
				require.NotNil(t, sc.AllowPrivilegeEscalation, where)
				assert.False(t, *sc.AllowPrivilegeEscalation, where)
				require.NotNil(t, sc.Capabilities, where)
				assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop, where)
				home := ""
				for _, e := range c.Env {
					if e.Name == "HOME" {
						home = e.Value
					}
				}
				require.NotEmpty(t, home, "%s: set HOME", where)
				mounted := map[string]string{}
				for _, m := range c.VolumeMounts {
					mounted[m.MountPath] = m.Name
				}
				for _, dir := range []string{home, "/tmp"} {
					assert.True(t, emptyDirs[mounted[dir]], "%s: %s is not an emptyDir", where, dir)
				}
			}
		})
	}
}

// TestPodSecurityCatches shows that the evaluator forbids each hardening the manifests
// carry when it is taken away, so that its silence above means something.
func TestPodSecurityCatches(t *testing.T) {
	pods, _ := readManifests(t)
	var base pod
	for _, p := range pods {
		if len(p.spec.InitContainers) > 0 {
			base = p
		}
	}
	require.NotEmpty(t, base.where, "a pod with an init container")
	tests := map[string]struct {
		mutate func(s *corev1.PodSpec)
		want   string
	}{
		"no seccomp profile": {
			mutate: func(s *corev1.PodSpec) { s.SecurityContext.SeccompProfile = nil },
			want:   "seccompProfile",
		},
		"init container may escalate": {
			mutate: func(s *corev1.PodSpec) { s.InitContainers[0].SecurityContext.AllowPrivilegeEscalation = nil },
			want:   "allowPrivilegeEscalation",
		},
		"init container keeps capabilities": {
			mutate: func(s *corev1.PodSpec) { s.InitContainers[0].SecurityContext.Capabilities = nil },
			want:   "capabilities",
		},
		"may run as root": {
			mutate: func(s *corev1.PodSpec) { s.SecurityContext.RunAsNonRoot = nil },
			want:   "runAsNonRoot",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			p := base
			p.spec = *base.spec.DeepCopy()
			tt.mutate(&p.spec)
			assert.Contains(t, strings.Join(restricted(t, p), "\n"), tt.want)
		})
	}
}
