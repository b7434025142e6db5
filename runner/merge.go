package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// ErrMergeInputs means the folders given to Merge do not form one complete run.
var ErrMergeInputs = errors.New("merge")

// shardOutput is one input of Merge.
type shardOutput struct {
	dir  string
	info RunInfo
	sum  Summary
}

// Merge joins the output folders of the shards of one run into out: summary.json,
// summary.md and junit.xml. It fails when the inputs come from different specs, when a
// shard is missing or given twice, or when a session appears twice or not at all.
func Merge(out string, dirs []string) (*Summary, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%w: no shard folders given", ErrMergeInputs)
	}
	var shards []shardOutput
	for _, d := range dirs {
		if same, err := samePath(d, out); err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		} else if same {
			return nil, fmt.Errorf("%w: --out %s is also an input: the merged reports would overwrite the shard's", ErrMergeInputs, out)
		}
		so, err := readShardOutput(d)
		if err != nil {
			return nil, err
		}
		shards = append(shards, so)
	}
	if err := checkShards(shards); err != nil {
		return nil, err
	}
	merged := &Summary{SchemaVersion: SummarySchemaVersion, Spec: shards[0].sum.Spec,
		SpecDigest: shards[0].info.SpecDigest, SessionsDigest: shards[0].info.SessionsDigest, Sessions: []Row{}}
	var start, end time.Time
	absOut, err := filepath.Abs(out)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	sessionDirs := map[string]string{}
	var versions []string
	for _, so := range shards {
		if v := so.sum.Version; v != "" && !slices.Contains(versions, v) {
			versions = append(versions, v)
		}
		if so.info.Shard != nil {
			merged.Shards = append(merged.Shards, so.info.Shard.String())
		}
		merged.Totals.ThrottledMS += so.sum.Totals.ThrottledMS
		merged.Totals.ThrottlePauses += so.sum.Totals.ThrottlePauses
		merged.Totals.PacedMS += so.sum.Totals.PacedMS
		merged.Totals.BudgetExhausted = merged.Totals.BudgetExhausted || so.sum.Totals.BudgetExhausted
		for _, r := range so.sum.Sessions {
			dir := filepath.Join(so.dir, filepath.FromSlash(r.folder()))
			sessionDirs[r.Key] = dir
			// The merged summary names the folder, for agentrun report.
			r.SessionDir, err = relativeTo(absOut, dir)
			if err != nil {
				return nil, fmt.Errorf("merge: %w", err)
			}
			merged.Sessions = append(merged.Sessions, r)
		}
		if t, err := time.Parse(time.RFC3339, so.sum.StartedAt); err == nil && (start.IsZero() || t.Before(start)) {
			start = t
		}
		if t, err := time.Parse(time.RFC3339, so.sum.EndedAt); err == nil && t.After(end) {
			end = t
		}
	}
	sort.Strings(merged.Shards)
	slices.Sort(versions)
	merged.Version = strings.Join(versions, ", ")
	sort.Slice(merged.Sessions, func(i, j int) bool { return merged.Sessions[i].Key < merged.Sessions[j].Key })
	merged.StartedAt, merged.EndedAt = start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339)
	merged.DurationMS = end.Sub(start).Milliseconds()
	merged.total()
	// Each shard's warnings, but for its count of unconfined sessions: that note is
	// made again for the whole run.
	var warnings []string
	for _, so := range shards {
		for _, w := range so.sum.Warnings {
			if n := so.sum.Unconfined(); n == 0 || w != unconfinedNote(n) {
				warnings = append(warnings, w)
			}
		}
	}
	merged.warn(warnings)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	err = WriteReports(nil, out, merged, func(key string) string { return sessionDirs[key] }, nil)
	return merged, err
}

// readShardOutput reads the run.json and summary.json of a finished run in dir and
// checks that both belong to the same run: a run that was killed leaves a run.json
// without an end time, next to the summary of an earlier run.
func readShardOutput(dir string) (shardOutput, error) {
	so := shardOutput{dir: dir}
	if err := readJSON(filepath.Join(dir, RunFile), &so.info); err != nil {
		return so, fmt.Errorf("%w: %s is not a run's output folder: %w", ErrMergeInputs, dir, err)
	}
	if so.info.EndedAt == "" {
		return so, fmt.Errorf("%w: the run in %s did not finish (run.json has no ended_at); run it again with --resume", ErrMergeInputs, dir)
	}
	if err := readJSON(filepath.Join(dir, SummaryFile), &so.sum); err != nil {
		return so, fmt.Errorf("%w: %s has no summary: %w", ErrMergeInputs, dir, err)
	}
	stale := so.sum.SpecDigest != so.info.SpecDigest || so.sum.SessionsDigest != so.info.SessionsDigest ||
		len(so.sum.Sessions) != len(so.info.Selected)
	for i := 0; !stale && i < len(so.sum.Sessions); i++ {
		stale = so.sum.Sessions[i].Key != so.info.Selected[i]
	}
	if stale {
		return so, fmt.Errorf("%w: the summary.json in %s is not the one of its run.json (an earlier run's?)", ErrMergeInputs, dir)
	}
	return so, nil
}

// relativeTo is path relative to the folder base, slash-separated; the absolute path
// where there is no relative one (another volume).
func relativeTo(base, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(base, abs)
	if err != nil {
		return filepath.ToSlash(abs), nil
	}
	return filepath.ToSlash(rel), nil
}

// samePath reports whether a and b name the same folder.
func samePath(a, b string) (bool, error) {
	aa, err := filepath.Abs(a)
	if err != nil {
		return false, err
	}
	bb, err := filepath.Abs(b)
	if err != nil {
		return false, err
	}
	if aa == bb {
		return true, nil
	}
	sa, errA := os.Stat(aa)
	sb, errB := os.Stat(bb)
	return errA == nil && errB == nil && os.SameFile(sa, sb), nil
}

// checkShards verifies that the inputs are every shard of one run, once each.
func checkShards(shards []shardOutput) error {
	first := shards[0].info
	total := 0
	if first.Shard != nil {
		total = first.Shard.Total
	}
	seen := map[int]string{}
	keys := map[string]string{}
	for _, so := range shards {
		in := so.info
		if in.SessionsDigest != first.SessionsDigest || in.SpecDigest != first.SpecDigest {
			return fmt.Errorf("%w: %s comes from a different spec than %s (spec digest %s vs %s)",
				ErrMergeInputs, so.dir, shards[0].dir, short(in.SpecDigest), short(first.SpecDigest))
		}
		switch {
		case in.Shard == nil && total != 0, in.Shard != nil && in.Shard.Total != total:
			return fmt.Errorf("%w: %s and %s were split into different numbers of shards", ErrMergeInputs, so.dir, shards[0].dir)
		case in.Shard != nil:
			if prev, dup := seen[in.Shard.Index]; dup {
				return fmt.Errorf("%w: shard %s given twice (%s and %s)", ErrMergeInputs, in.Shard, prev, so.dir)
			}
			seen[in.Shard.Index] = so.dir
		}
		if in.Filter != first.Filter {
			return fmt.Errorf("%w: %s and %s ran with different --filter values", ErrMergeInputs, so.dir, shards[0].dir)
		}
		for _, r := range so.sum.Sessions {
			if prev, dup := keys[r.Key]; dup {
				return fmt.Errorf("%w: session %s appears in both %s and %s", ErrMergeInputs, r.Key, prev, so.dir)
			}
			keys[r.Key] = so.dir
		}
	}
	if total == 0 && len(shards) > 1 {
		return fmt.Errorf("%w: %d folders given but none is a shard: merge joins the outputs of --shard runs", ErrMergeInputs, len(shards))
	}
	var missing []string
	for i := 0; i < total; i++ {
		if _, ok := seen[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, total))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: missing shard(s) %s", ErrMergeInputs, strings.Join(missing, ", "))
	}
	if first.Filter == "" && len(keys) != first.SessionsTotal {
		return fmt.Errorf("%w: the shards hold %d sessions but the spec has %d", ErrMergeInputs, len(keys), first.SessionsTotal)
	}
	return nil
}

func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
