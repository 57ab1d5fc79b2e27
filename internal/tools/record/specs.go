package main

import (
	"fmt"
	"strings"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/agents/claude"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// folderSuffix follows a CLI's pin folder in the name of its recordings
// folder: Claude Code's recordings made here go beside the first ones,
// which an earlier tool made.
func folderSuffix(cli string) string {
	if cli == "claude" {
		return "-extra"
	}
	return ""
}

// classic runs Claude Code with its classic renderer.
func classic(o agents.OfflineOptions) (agents.OfflineSetup, error) {
	return claude.OfflineSetup(o, claude.RendererClassic)
}

// spec is one recording: which CLI, at what size, the prompts typed and the
// model's reply to each, and what a scanner must find.
type spec struct {
	CLI      string // a profile with a Pin: claude, codex, gemini, pi, …
	Name     string // file name without extension
	Renderer string // for the fixture: the renderer Setup picks, if any
	// Setup, when set, replaces the profile's Offline.Setup (Claude
	// Code's classic renderer).
	Setup   func(agents.OfflineOptions) (agents.OfflineSetup, error)
	Cols    int
	Rows    int
	Prompts []string
	Replies []string           // one per prompt, plus one after the tool call
	Tool    *mockmodel.ToolUse // a tool call after the first reply's text
	Args    []string           // extra command-line arguments for the CLI
	Must    []command
	MustNot []command
	Either  []command
	Note    string
}

func relay(target, body string) command { return command{NS: "relay", Target: target, Body: body} }

// Texts shared by the recordings of several CLIs.
const (
	bobReview   = "Please review the migration in db/migrate/0042_add_index.rb before I run it on staging tonight."
	bobRerun    = "Please rerun the flaky integration suite and tell me the seed it fails with."
	bobNightly  = "The nightly build failed in three places: the auth service tests time out after 30 seconds, the billing migration leaves a lock on the invoices table, and the web bundle is 12% over its size budget; please take the first two and tell me when they are fixed."
	bobMigrate  = "Please take the database migration ticket."
	carolDocs   = "The API docs need the new auth endpoints before Friday."
	broadcastRC = "Release candidate 2 is tagged; please test it today."
	memorySave  = "The staging database is reset every Sunday at 02:00 UTC."
	memorySrch  = "release checklist"
)

// longReply is a reply of n bullet lines with a command paragraph after
// line mid: taller than the screen, so the command scrolls away.
func longReply(n, mid int, cmd string) string {
	var b strings.Builder
	b.WriteString("Here is the whole plan, step by step.\n\n")
	for i := 1; i <= n; i++ {
		switch i {
		case 12:
			fmt.Fprintf(&b, "- Step %d: tell @relay:Carol about it later, in prose only.\n", i)
		default:
			fmt.Fprintf(&b, "- Step %d: check module %c%d and note what changed.\n", i, 'a'+rune(i%26), i)
		}
		if i == mid {
			b.WriteString("\n" + cmd + "\n\n")
		}
	}
	b.WriteString("\nThat is the whole plan.")
	return b.String()
}

// tallGemini is a reply of several paragraphs, taller than a 24-row window,
// whose @relay line ends the second paragraph.
func tallGemini() string {
	var b strings.Builder
	b.WriteString("Here is where the release stands.\n\n")
	b.WriteString("The backend work is done: the auth service moved to the new token format,\n" +
		"the billing jobs run on the new queue, and the nightly export is fast again.\n" +
		"Two things remain before we can tag the release candidate.\n\n")
	b.WriteString("First, the migration needs a second pair of eyes. It adds an index to a\n" +
		"table with forty million rows, and I want someone to check the lock it takes.\n" +
		"@relay:Bob " + bobReview + "\n\n")
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&b, "Paragraph %d of the notes: the checks for area %d passed on staging, the\n"+
			"dashboards look normal, and nothing in the logs needs a follow-up today.\n\n", i, i)
	}
	b.WriteString("That is everything for now.")
	return b.String()
}

// tallParagraph is a reply whose first paragraph alone is taller than a
// 24-row window and ends with the @relay line: Gemini CLI repaints that
// paragraph live until it is complete, so the live area outgrows the window.
func tallParagraph() string {
	var b strings.Builder
	b.WriteString("Release notes, in one go:\n\n")
	for i := 1; i <= 28; i++ {
		fmt.Fprintf(&b, "line %d of the summary: area %d is green on staging and needs nothing more.\n", i, i)
	}
	b.WriteString("@relay:Bob " + bobReview + "\n\nThat is everything for now.")
	return b.String()
}

func allSpecs() []spec {
	const wideNote = "several commands of every built-in namespace in one reply on a wide screen; the mid-sentence mention of Dave never fires"
	wideReply := "Status update for the team.\n\n@relay:Bob " + bobMigrate + "\n\n@relay:Carol " + carolDocs +
		"\n\n@broadcast: " + broadcastRC + "\n\n@memory:save " + memorySave + "\n\n@memory:search " + memorySrch +
		"\n\nA mention of @relay:Dave in the middle of a sentence must not fire.\n\nThat's all."
	wideMust := []command{relay("Bob", bobMigrate), relay("Carol", carolDocs),
		{NS: "broadcast", Body: broadcastRC}, {NS: "memory", Target: "save", Body: memorySave},
		{NS: "memory", Target: "search", Body: memorySrch}}
	twiceReply := "Asking Bob again.\n\n@relay:Bob " + bobRerun + "\n\nWaiting for him."
	const twiceNote = "the same command in two consecutive replies: it must fire twice, once per reply (must lists it twice), and never a third time for a redraw"
	const longNote = "the reply is taller than the screen: the command scrolls off before the reply ends and is not on the final screen; it must fire exactly once; the mid-line mention of Carol never fires"
	narrowReply := "Sending the report.\n\n@relay:Bob " + bobNightly + "\n\nDone."
	const narrowNote = "a narrow terminal: the command wraps over several rows, each continuation indented like the first; the body is the whole paragraph"
	carolNever := []command{{NS: "relay", Target: "Carol"}}
	return []spec{
		{CLI: "claude", Name: "long-80x24", Cols: 80, Rows: 24, Prompts: []string{"fx-long"},
			Replies: []string{longReply(60, 30, "@relay:Bob "+bobReview)},
			Must:    []command{relay("Bob", bobReview)}, MustNot: carolNever, Note: longNote},
		{CLI: "claude", Name: "twice-100x30", Cols: 100, Rows: 30, Prompts: []string{"fx-twice-1", "fx-twice-2"},
			Replies: []string{twiceReply, twiceReply},
			Must:    []command{relay("Bob", bobRerun), relay("Bob", bobRerun)}, Note: twiceNote},
		{CLI: "claude", Name: "narrow-60x20", Cols: 60, Rows: 20, Prompts: []string{"fx-narrow"},
			Replies: []string{narrowReply}, Must: []command{relay("Bob", bobNightly)}, Note: narrowNote},
		{CLI: "claude", Name: "wide-160x50", Cols: 160, Rows: 50, Prompts: []string{"fx-wide"},
			Replies: []string{wideReply}, Must: wideMust, MustNot: []command{{NS: "relay", Target: "Dave"}}, Note: wideNote},
		{CLI: "claude", Name: "classic-long-80x24", Renderer: claude.RendererClassic, Setup: classic, Cols: 80, Rows: 24, Prompts: []string{"fx-long"},
			Replies: []string{longReply(60, 30, "@relay:Bob "+bobReview)},
			Must:    []command{relay("Bob", bobReview)}, MustNot: carolNever,
			Note: "Claude Code's classic renderer (main screen, no alternate screen): " + longNote},
		{CLI: "claude", Name: "classic-twice-100x30", Renderer: claude.RendererClassic, Setup: classic, Cols: 100, Rows: 30, Prompts: []string{"fx-twice-1", "fx-twice-2"},
			Replies: []string{twiceReply, twiceReply},
			Must:    []command{relay("Bob", bobRerun), relay("Bob", bobRerun)},
			Note:    "Claude Code's classic renderer: " + twiceNote},

		{CLI: "claude", Name: "tool-100x30", Cols: 100, Rows: 30, Prompts: []string{"fx-tool"},
			Replies: []string{"Asking Bob first.\n\n@relay:Bob " + bobRerun + "\n\nNow checking the tree.", "The tree is clean; waiting for Bob."},
			Tool:    &mockmodel.ToolUse{Name: "Bash", Input: map[string]any{"command": "true", "description": "Check the tree"}},
			Must:    []command{relay("Bob", bobRerun)},
			Note:    "a command in the text before a tool call (Bash `true`, run at once in auto mode), then a final text after the tool result: the command fires once; Claude Code redraws the reply around the tool call"},
		{CLI: "codex", Name: "single-100x30", Cols: 100, Rows: 30, Prompts: []string{"fx-single"},
			Replies: []string{narrowReply}, Must: []command{relay("Bob", bobNightly)},
			Note: "one command that wraps over three rows"},
		{CLI: "codex", Name: "long-80x24", Cols: 80, Rows: 24, Prompts: []string{"fx-long"},
			Replies: []string{longReply(60, 30, "@relay:Bob "+bobReview)},
			Must:    []command{relay("Bob", bobReview)}, MustNot: carolNever, Note: longNote},
		{CLI: "codex", Name: "twice-100x30", Cols: 100, Rows: 30, Prompts: []string{"fx-twice-1", "fx-twice-2"},
			Replies: []string{twiceReply, twiceReply},
			Must:    []command{relay("Bob", bobRerun), relay("Bob", bobRerun)}, Note: twiceNote},
		{CLI: "codex", Name: "wide-160x50", Cols: 160, Rows: 50, Prompts: []string{"fx-wide"},
			Replies: []string{wideReply}, Must: wideMust, MustNot: []command{{NS: "relay", Target: "Dave"}}, Note: wideNote},

		{CLI: "codex", Name: "tool-100x30", Cols: 100, Rows: 30, Prompts: []string{"fx-tool"},
			Replies: []string{"Asking Bob first.\n\n@relay:Bob " + bobRerun + "\n\nNow checking the tree.", "The tree is clean; waiting for Bob."},
			Tool:    &mockmodel.ToolUse{Name: "exec_command", Input: map[string]any{"cmd": "true"}},
			Must:    []command{relay("Bob", bobRerun)},
			Note:    "a command in the text before a tool call (exec_command `true`, approval policy never), then a final text after the tool result: the command fires once"},
		{CLI: "gemini", Name: "single-100x30", Cols: 100, Rows: 30, Prompts: []string{"fx-single"},
			Replies: []string{narrowReply}, Must: []command{relay("Bob", bobNightly)},
			Note: "one command that wraps over three rows; it is repainted while it streams, so half-written versions of it are on screen before the whole line"},
		{CLI: "gemini", Name: "tall-80x24", Cols: 80, Rows: 24, Prompts: []string{"fx-tall"},
			Replies: []string{tallGemini()}, Must: []command{relay("Bob", bobReview)},
			Note: "a reply taller than the window whose @relay line ends its second paragraph; finished paragraphs go to the scrollback, so the command scrolls off and is not on the final screen: it must fire exactly once, and never in a half-written form"},
		{CLI: "gemini", Name: "tall-paragraph-80x24", Cols: 80, Rows: 24, Prompts: []string{"fx-tall-paragraph"},
			Replies: []string{tallParagraph()}, Must: []command{relay("Bob", bobReview)},
			Note: "one paragraph of 29 lines, taller than the window, whose last line is the @relay command (it wraps to a second row at 80 columns); Gemini CLI repaints the paragraph while it streams, clearing screen and scrollback (ESC[2J ESC[3J) each time the live area outgrows the window, and its final rendering drops the last two lines of the paragraph, the command among them: the whole command is on screen only in the last moments of the stream, just before the final redraw removes it. It must fire exactly once, never half-written"},
		{CLI: "gemini", Name: "tool-100x30", Cols: 100, Rows: 30, Prompts: []string{"fx-tool"}, Args: []string{"--approval-mode", "yolo"},
			Replies: []string{"Asking Bob first.\n\n@relay:Bob " + bobRerun + "\n\nNow checking the tree.", "The tree is clean; waiting for Bob."},
			Tool:    &mockmodel.ToolUse{Name: "run_shell_command", Input: map[string]any{"command": "true", "description": "Check the tree"}},
			Must:    []command{relay("Bob", bobRerun)},
			Note:    "a command in the text before a tool call (run_shell_command `true`, started with --approval-mode yolo), then a final text after the tool result: the command fires once"},
		{CLI: "gemini", Name: "twice-100x30", Cols: 100, Rows: 30, Prompts: []string{"fx-twice-1", "fx-twice-2"},
			Replies: []string{twiceReply, twiceReply},
			Must:    []command{relay("Bob", bobRerun), relay("Bob", bobRerun)}, Note: twiceNote},
		{CLI: "pi", Name: "single-100x30", Cols: 100, Rows: 30, Prompts: []string{"fx-single"},
			Replies: []string{narrowReply}, Must: []command{relay("Bob", bobNightly)},
			Note: "one command that pi wraps over three rows, each continuation indented by one space like the first"},
		{CLI: "pi", Name: "twice-100x30", Cols: 100, Rows: 30, Prompts: []string{"fx-twice-1", "fx-twice-2"},
			Replies: []string{twiceReply, twiceReply},
			Must:    []command{relay("Bob", bobRerun), relay("Bob", bobRerun)}, Note: twiceNote},
		{CLI: "pi", Name: "wide-160x50", Cols: 160, Rows: 50, Prompts: []string{"fx-wide"},
			Replies: []string{wideReply}, Must: wideMust, MustNot: []command{{NS: "relay", Target: "Dave"}}, Note: wideNote},
		{CLI: "opencode", Name: "single-100x30", Cols: 100, Rows: 30, Prompts: []string{"fx-single"},
			Replies: []string{narrowReply}, Must: []command{relay("Bob", bobNightly)},
			Note: "one command that OpenCode wraps over rows inside its framed message column"},
		{CLI: "opencode", Name: "twice-100x30", Cols: 100, Rows: 30, Prompts: []string{"fx-twice-1", "fx-twice-2"},
			Replies: []string{twiceReply, twiceReply},
			Must:    []command{relay("Bob", bobRerun), relay("Bob", bobRerun)}, Note: twiceNote},
		{CLI: "gemini", Name: "wide-160x50", Cols: 160, Rows: 50, Prompts: []string{"fx-wide"},
			Replies: []string{wideReply}, Must: wideMust, MustNot: []command{{NS: "relay", Target: "Dave"}}, Note: wideNote},
		{CLI: "qwen", Name: "single-100x30", Cols: 100, Rows: 30, Prompts: []string{"fx-single"},
			Replies: []string{narrowReply}, Must: []command{relay("Bob", bobNightly)},
			Note: "one command that Qwen Code wraps over rows, each continuation indented like the first"},
		{CLI: "qwen", Name: "twice-100x30", Cols: 100, Rows: 30, Prompts: []string{"fx-twice-1", "fx-twice-2"},
			Replies: []string{twiceReply, twiceReply},
			Must:    []command{relay("Bob", bobRerun), relay("Bob", bobRerun)}, Note: twiceNote},
	}
}
