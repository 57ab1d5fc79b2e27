package team

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Branch is the branch of an agent's worktree: relay/NAME.
func Branch(name string) string { return "relay/" + name }

// worktreesDir is where the agents' worktrees of the repository at root
// are: .relay/worktrees, ignored by git.
func worktreesDir(root string) string { return filepath.Join(root, ".relay", "worktrees") }

// Worktree returns the folder of agent a's worktree (which may not exist
// yet): .relay/worktrees/NAME in the git repository of its cwd.
func Worktree(ctx context.Context, a Agent) (string, error) {
	root, err := gitRoot(ctx, a.Cwd)
	if err != nil {
		return "", err
	}
	return filepath.Join(worktreesDir(root), a.Name), nil
}

// gitRoot returns the top folder of the git repository dir is in.
func gitRoot(ctx context.Context, dir string) (string, error) {
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("%s is not in a git repository (worktree = true needs one): %w", dir, err)
	}
	return strings.TrimSpace(out), nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// ensureWorktree returns the folder agent a runs in with worktree = true:
// its cwd's counterpart in the worktree .relay/worktrees/NAME on branch
// relay/NAME, made from the repository's HEAD the first time and reused
// after (the branch too, if it outlived its worktree). It never deletes.
func ensureWorktree(ctx context.Context, a Agent) (dir string, created bool, err error) {
	root, err := gitRoot(ctx, a.Cwd)
	if err != nil {
		return "", false, err
	}
	rel, err := filepath.Rel(root, a.Cwd)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = "."
	}
	wt := filepath.Join(worktreesDir(root), a.Name)
	if _, err := os.Stat(filepath.Join(wt, ".git")); err == nil {
		return filepath.Join(wt, rel), false, nil
	}
	if err := os.MkdirAll(worktreesDir(root), 0o755); err != nil {
		return "", false, fmt.Errorf("worktree of %s: %w", a.Name, err)
	}
	// The worktrees are the user's work, not the project's files.
	ignore := filepath.Join(worktreesDir(root), ".gitignore")
	if _, err := os.Stat(ignore); os.IsNotExist(err) {
		_ = os.WriteFile(ignore, []byte("# relay team: each agent's git worktree (see relay team status)\n*\n"), 0o644)
	}
	branch := Branch(a.Name)
	args := []string{"worktree", "add", "-b", branch, wt}
	if _, err := git(ctx, root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		args = []string{"worktree", "add", wt, branch}
	}
	if _, err := git(ctx, root, args...); err != nil {
		return "", false, fmt.Errorf("worktree of %s: %w", a.Name, err)
	}
	return filepath.Join(wt, rel), true, nil
}
