package cli

import (
	"github.com/spf13/cobra"

	"github.com/piagent/piagent/internal/ops/verbs"
)

// Help topics: `piagent help exit-codes`, `piagent help environment`. They
// are commands without a body, which cobra lists as additional help topics.

const exitCodesHelp = `Every command exits with one of these statuses:

  0  success
  1  needs attention or refused: MCP cannot operate here (list and doctor in
     a full-block state); doctor also when a repository server waits for a
     decision, a server lacks a command or variable, or a server stopped
     under the sandbox; a decision piagent will not take (add of a name the
     file already has, approve --digest of a changed server); a name that
     is not there (get, approve, disable … of an unknown server); Pi not
     found; setup with something left to fix
  2  bad usage or refused input: an unknown command or flag, a missing
     argument, a value outside its set (a preset, a scope, a mode), a secret
     in --env
  3  cancelled: you answered no at a prompt (approve, approve --tools,
     uninstall --purge); nothing changed

Two commands answer a question with their status instead:

  piagent policy check   0 allow, 1 block, 3 confirm (the call needs a person)
  piagent pi             Pi's own exit status`

const environmentHelp = `Variables piagent reads:

  PIAGENT_PI              Pi's executable (default: pi on PATH)
  PIAGENT_BIN             the piagent the Pi extension runs (default: piagent on PATH)
  PIAGENT_NO_MCP_NOTICE   1: no session notice at Pi's start
  PI_CODING_AGENT_DIR     Pi's agent folder (default ~/.pi/agent), as Pi reads it
  PI_PACKAGE_DIR          Pi's package folder, as Pi reads it
  PI_MCP_CONFIG_MODE      the adapter's config mode, as the adapter reads it
  MCP_DIRECT_TOOLS        the adapter's direct tools switch, as the adapter reads it
  PATH                    where Pi, Node, npm, docker and browsers are looked for
  CI                      true: a sandbox test that cannot run fails instead of skipping

Set by 'piagent pi' for the session it starts (not for you to set):

  PIAGENT_LAUNCHER, PIAGENT_LAUNCH_CONFIG, PIAGENT_PROJECT`

// helpTopics are the help topics every command tree carries.
func helpTopics() []*cobra.Command {
	return fromTable(verbs.Help,
		&cobra.Command{Use: "exit-codes", Short: "What each exit status means", Long: exitCodesHelp},
		&cobra.Command{Use: "environment", Short: "The environment variables piagent reads", Long: environmentHelp},
	)
}
