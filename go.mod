module github.com/piagent/piagent

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0
	github.com/pelletier/go-toml/v2 v2.4.3
	github.com/rogpeppe/go-internal v1.16.0
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	github.com/tailscale/hujson v0.0.0-20260727124030-b80ff77dac4f
	golang.org/x/sys v0.50.0
	golang.org/x/term v0.48.0
	golang.org/x/text v0.36.0
	golang.org/x/tools v0.44.0
	mvdan.cc/sh/v3 v3.14.1
)

require github.com/inconshreveable/mousetrap v1.1.0 // indirect
