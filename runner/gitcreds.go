package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/agentrun/agentrun/pathname"
)

// checkoutCreds are the credentials for its forge that a repository's git config holds,
// as CI leaves a checkout for the steps after it: actions/checkout's token as an extra
// HTTP header in .git/config (before v6) or in a file of the runner's temporary folder
// that .git/config includes (v6), GitLab CI's in the remote's URL. The tools get the
// repository without them: the token would let a model push to the repository, and
// anything the tools read reaches the provider and the artifacts.
type checkoutCreds struct {
	// clean maps each config file of the repository that holds credentials to its
	// content without them, for a copy of the repository; keys are the keys of the
	// credentials in it, without a URL's user information.
	clean map[string][]byte
	keys  map[string][]string
	// hide are the files hidden in every mode, since the tools could read them by
	// name: those that a config includes and that hold credentials themselves.
	hide []string
	// drop are the credential files that CI's steps leave in the checkout itself
	// (actionFiles): hidden, and left out of a copy.
	drop []string
	// trees are the work trees of the repositories checked out inside the folder
	// (nestedWorkTrees), by their paths in it: the git guard keeps their git folders
	// too, in the folder or in a copy of it, without walking it again.
	trees []string
}

// actionFiles are the names of the credential files that CI's steps write into the
// checkout: google-github-actions/auth's credentials (a service account's key, or a
// federation config that holds the job's token for its OIDC tokens), untracked, at
// the workspace's top.
var actionFiles = []string{"gha-creds-*.json"}

// forTools says what the tools of a session in the checkout, or in a copy of it
// (copied), must not see: hide, the files the sandbox hides, and where the tools would
// see a config file that holds credentials, which no sandbox can hide without taking
// the repository from git, refused, which says so. A copy has the clean configs
// (applyTo), and its tools' git reads those: the originals are hidden, since the
// checkout itself lies where the tools may read it (CI's work folder, in the external
// scope), as do those outside it, of a worktree that the checkout is.
func (c *checkoutCreds) forTools(copied bool) (hide []string, refused error) {
	hide = slices.Concat(c.hide, c.drop)
	var seen []string
	for _, p := range slices.Sorted(maps.Keys(c.clean)) {
		if copied {
			hide = append(hide, p)
		} else {
			seen = append(seen, fmt.Sprintf("%s (%s)", p, strings.Join(c.keys[p], ", ")))
		}
	}
	if len(seen) > 0 {
		// The fix first: a terminal shows the first line's first 160 characters.
		refused = fmt.Errorf("%w: the checkout's git config holds credentials: set actions/checkout's "+
			"persist-credentials: false, or use workspace mode copy, whose copy comes without them "+
			"(the tools would read them in %s)", ErrSandbox, strings.Join(seen, "; "))
	}
	return hide, refused
}

// cleanOf is the content without credentials of the config file at path, by any name
// (a link on the way to it), and false where it holds none.
func (c *checkoutCreds) cleanOf(path string) ([]byte, bool) {
	if b, ok := c.clean[path]; ok {
		return b, true
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, false
	}
	for p, b := range c.clean {
		if r, err := filepath.EvalSymlinks(p); err == nil && r == real {
			return b, true
		}
	}
	return nil, false
}

// applyTo writes the clean configs into the copy dst of the folder src, and removes
// the dropped files from it.
func (c *checkoutCreds) applyTo(src, dst string) error {
	for _, p := range c.drop {
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if err := os.Remove(filepath.Join(dst, rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	for p, b := range c.clean {
		if !pathname.Within(src, p) {
			continue
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := os.Lstat(target)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, b, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// scanCheckout finds the credentials in the git configs of the repository at dir
// (none where dir is no repository), not looking into the run's output folder out;
// home is what ~ means in an include's path.
func (g gitBin) scanCheckout(ctx context.Context, dir, out, home string) (*checkoutCreds, error) {
	c := &checkoutCreds{clean: map[string][]byte{}, keys: map[string][]string{}}
	for _, pattern := range actionFiles {
		found, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return nil, err
		}
		c.drop = append(c.drop, found...)
	}
	c.trees = nestedWorkTrees(dir, out)
	for _, f := range repoConfigs(dir, c.trees) {
		s := newConfigScan(g, home)
		b, creds, err := s.file(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("git config %s: %w", f, err)
		}
		c.hide = append(c.hide, s.included...)
		if len(creds) == 0 {
			continue
		}
		if c.clean[f], err = g.cleanConfig(ctx, b, s.entries[f], creds); err != nil {
			return nil, fmt.Errorf("take the credentials out of %s: %w", f, err)
		}
		for _, e := range creds {
			c.keys[f] = append(c.keys[f], e.safeKey())
		}
		slices.Sort(c.keys[f])
		c.keys[f] = slices.Compact(c.keys[f])
	}
	slices.Sort(c.hide)
	c.hide = slices.Compact(c.hide)
	return c, nil
}

// nestedDepth is how many folders below the workspace's top repoConfigs looks for the
// repositories CI checks out inside it (actions/checkout's path:, a second, private
// repository of tools), each with its own token.
const nestedDepth = 3

// repoConfigs are the config files of the repository at dir, or of the one that holds
// dir (a workspace in a folder of CI's checkout), and of those checked out inside it,
// whose work trees are nested, by their paths in dir (nestedWorkTrees).
func repoConfigs(dir string, nested []string) []string {
	out := configsOf(dir)
	for up := filepath.Dir(dir); len(out) == 0 && up != filepath.Dir(up); up = filepath.Dir(up) {
		if exists(filepath.Join(up, ".git")) {
			out = configsOf(up)
			break
		}
	}
	for _, rel := range nested {
		out = append(out, configsOf(filepath.Join(dir, rel))...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// nestedWorkTrees are the work trees of the repositories up to nestedDepth folders
// below dir, by their paths in it, not dir's own (not into node_modules, a link, or skip: the run's output
// folder, which a copy leaves out and whose copies of earlier runs are no checkout's).
func nestedWorkTrees(dir, skip string) []string {
	var out []string
	base := strings.Count(filepath.Clean(dir), "/")
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil || p == dir || !d.IsDir():
			return nil
		case d.Name() == ".git" || d.Name() == "node_modules" || p == skip:
			return filepath.SkipDir
		}
		if exists(filepath.Join(p, ".git")) {
			if rel, err := filepath.Rel(dir, p); err == nil {
				out = append(out, rel)
			}
		}
		if strings.Count(p, "/")-base >= nestedDepth {
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

// commonDir is the common git folder of the git folder gitDir: the one its commondir
// file names (a linked worktree's), or gitDir itself.
func commonDir(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir
	}
	common := strings.TrimSpace(string(b))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitDir, common)
	}
	return filepath.Clean(common)
}

// configsOf are the config files of the repository whose work tree is dir: its git
// folder's (a folder .git, or the folder a .git file names, and the common one it
// shares with the other worktrees), the worktrees' and the submodules' under modules/.
func configsOf(dir string) []string {
	gitDir, err := gitDirOf(dir)
	if err != nil {
		return nil
	}
	common := commonDir(gitDir)
	var out []string
	for _, root := range slices.Compact([]string{filepath.Clean(common), filepath.Clean(gitDir)}) {
		out = append(out, filepath.Join(root, "config"), filepath.Join(root, "config.worktree"))
		for _, sub := range []string{"worktrees", "modules"} {
			_ = filepath.WalkDir(filepath.Join(root, sub), func(p string, d fs.DirEntry, err error) error {
				switch {
				case err != nil:
					return nil
				case d.IsDir() && (d.Name() == "objects" || d.Name() == "refs" || d.Name() == "logs"):
					return filepath.SkipDir
				case d.Type().IsRegular() && (d.Name() == "config" || d.Name() == "config.worktree"):
					out = append(out, p)
				}
				return nil
			})
		}
	}
	return slices.DeleteFunc(slices.Compact(out), func(p string) bool {
		info, err := os.Lstat(p)
		return err != nil || !info.Mode().IsRegular()
	})
}

// checkoutCreds scans the workspace folder dir for credentials once per run.
func (st *runState) checkoutCreds(ctx context.Context, dir string) (*checkoutCreds, error) {
	// The first session's context, without its end: the scan serves every session.
	scanCtx := context.WithoutCancel(ctx)
	return st.checkouts.get(dir, func() (*checkoutCreds, error) {
		c, err := st.git.scanCheckout(scanCtx, dir, st.outDir, st.r.opts.Home)
		if err == nil && len(c.clean)+len(c.hide)+len(c.drop) > 0 {
			// Said once, so that a push that fails in a session is understood.
			st.r.log.Info("the workspace's checkout holds credentials (in its git config, or files CI's steps left): the tools get it without them",
				zap.String("workspace", dir), zap.Strings("configs", slices.Sorted(maps.Keys(c.clean))),
				zap.Strings("hidden", slices.Concat(c.hide, c.drop)))
		}
		return c, err
	})
}

// userGit is what the user's git configs that hold credentials change for the tools
// (scanUser): the files hidden, the environment that points the tools' git at clean
// copies of them, and those copies, by the variable that names them
// (GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM), until written (written).
type userGit struct {
	hide, env []string
	clean     map[string][]byte
	// readable are the written copies, which the tools may read.
	readable []string
}

// scanUser finds the credentials in the configs of git that every repository of the
// user's shares (the global config in home or XDG_CONFIG_HOME of environ, and the
// system's): CI often writes a token there, as a URL that takes the place of the
// forge's ([url "https://TOKEN@github.com/"] insteadOf = https://github.com/, for
// private modules). A config that holds credentials is hidden from the tools whole,
// with the files it includes that hold them. Their git reads a copy without them in
// its place, made by git as a copy of the checkout's is (cleanConfig), so that their
// name, email, aliases, settings and safe.directory stay: GIT_CONFIG_GLOBAL names one
// file for both global configs, which the copy joins in git's order. (Under Landlock a
// config it may not read stops git, which finds it readable by access(2).) The global
// configs in account, the account's home where it is not home, which the tools' git does
// not read, are hidden where they hold credentials, and not copied.
func (g gitBin) scanUser(ctx context.Context, home, account string, environ []string) (userGit, error) {
	xdg := filepath.Join(home, ".config") // no home: /.config, which is no one's
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok && filepath.IsAbs(v) {
			xdg = v
		}
	}
	// In git's order: the system's, then the global ones, the XDG one first.
	files := [][2]string{{"/etc/gitconfig", "GIT_CONFIG_SYSTEM"}, {filepath.Join(xdg, "git", "config"), "GIT_CONFIG_GLOBAL"}}
	if home != "" {
		files = append(files, [2]string{filepath.Join(home, ".gitconfig"), "GIT_CONFIG_GLOBAL"})
	}
	u := userGit{clean: map[string][]byte{}}
	copies := map[string][]byte{} // by variable: the files' contents, clean, in order
	held := map[string]bool{}     // the variables one of whose files holds credentials
	for _, fo := range files {
		f, override := fo[0], fo[1]
		s, b, creds, err := u.scan(ctx, g, home, f)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return userGit{}, err
		}
		if len(creds) > 0 {
			if b, err = g.cleanConfig(ctx, b, s.entries[f], creds); err != nil {
				return userGit{}, fmt.Errorf("take the credentials out of %s: %w", f, err)
			}
			held[override] = true
		}
		copies[override] = append(append(copies[override], b...), '\n')
	}
	for override := range held {
		u.clean[override] = copies[override]
	}
	if account != "" && account != home {
		for _, f := range []string{filepath.Join(account, ".config", "git", "config"), filepath.Join(account, ".gitconfig")} {
			if _, _, _, err := u.scan(ctx, g, account, f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return userGit{}, err
			}
		}
	}
	slices.Sort(u.hide)
	u.hide = slices.Compact(u.hide)
	return u, nil
}

// scan reads git config f of home and adds to what u hides the files it includes that
// hold credentials, and f itself where it holds some; it returns the scan, f's content
// and its credentials (fs.ErrNotExist where f is not there).
func (u *userGit) scan(ctx context.Context, g gitBin, home, f string) (*configScan, []byte, []configEntry, error) {
	s := newConfigScan(g, home)
	b, creds, err := s.file(ctx, f)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil, err
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("git config %s: %w", f, err)
	}
	u.hide = append(u.hide, s.included...)
	if len(creds) > 0 {
		u.hide = append(u.hide, f)
	}
	return s, b, creds, nil
}

// written writes the clean copies into folder dir, which the tools cannot otherwise
// see, and points the tools' git at them.
func (u userGit) written(dir string) (userGit, error) {
	for _, override := range slices.Sorted(maps.Keys(u.clean)) {
		p := filepath.Join(dir, strings.ToLower(strings.TrimPrefix(override, "GIT_CONFIG_"))+".gitconfig")
		if err := os.WriteFile(p, u.clean[override], 0o644); err != nil {
			return userGit{}, fmt.Errorf("clean git config: %w", err)
		}
		u.env = append(u.env, override+"="+p)
		u.readable = append(u.readable, p)
	}
	slices.Sort(u.env)
	return u, nil
}
