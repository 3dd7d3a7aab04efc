package policy

import "github.com/piagent/piagent/internal/shell"

// The shell analysis this package builds on.
type (
	shWord    = shell.Word
	shCommand = shell.Command
	shContext = shell.Context
)

var (
	shParse    = shell.Parse
	shClassify = shell.Classify
)
