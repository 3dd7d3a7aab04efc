package mcpedit

// Helpers only the tests use.

// Names lists the servers in file order, each once (at its last position).
func (d *Doc) Names() []string {
	obj := d.servers(false)
	if obj == nil {
		return nil
	}
	var out []string
	for i, m := range obj.Members {
		name := memberName(m)
		if lastMember(obj, name) == i {
			out = append(out, name)
		}
	}
	return out
}
