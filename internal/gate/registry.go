package gate

import (
	"github.com/piagent/piagent/internal/registry"
)

// Registry lists, for this gate's home, agent dir and project, every file
// and folder that decides what runs (see package registry), including every
// layer and import candidate the readers consulted. binaries are piagent's
// own executables; extra are further folders to register (the extension's
// files).
func (g *Gate) Registry(binaries, extra []string) []registry.Entry {
	v := g.View
	consulted := make([]string, 0, len(v.Layers)+len(v.ImportTargets)+len(v.Consulted))
	for _, l := range v.Layers {
		consulted = append(consulted, l.Path)
	}
	for _, t := range v.ImportTargets {
		consulted = append(consulted, t.Path)
	}
	consulted = append(consulted, v.Consulted...)
	return registry.List(registry.Input{Home: v.Home, AgentDir: v.AgentDir, Project: v.Cwd, ConfigDir: v.ConfigDir,
		Consulted: consulted, Binaries: binaries, Extra: extra})
}
