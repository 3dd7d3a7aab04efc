package cli

import "github.com/piagent/piagent/internal/jsonc"

// appendRow appends r as writeJSON lays out a serverJSON in list's servers
// array, the row's { already placed: fields four spaces in, its } two. It
// is encoding/json's encoding written by hand, field by field in the
// struct's order with its omitempty rules (FuzzAppendRow holds it to
// encoding/json), because reflection and a second pass to lay it out were
// a fifth of list's time at 1,000 servers.
func appendRow(b []byte, r *serverJSON) []byte {
	const field = ",\n      \""
	b = append(b, "{\n      \"name\": "...)
	b = jsonc.AppendString(b, r.Name)
	b = appendStringField(b, field+"scope\": ", r.Scope)
	b = appendStringField(b, field+"layer\": ", r.Layer)
	b = appendStringField(b, field+"state\": ", r.State)
	b = appendStringField(b, field+"reason\": ", r.Reason)
	if r.Fix != "" {
		b = appendStringField(b, field+"fix\": ", r.Fix)
	}
	b = appendStringField(b, field+"transport\": ", r.Transport)
	b = appendStringField(b, field+"target\": ", r.Target)
	b = appendStringField(b, field+"source\": {\n        \"file\": ", r.Source.File)
	if r.Source.Kind != "" {
		b = appendStringField(b, ",\n        \"kind\": ", r.Source.Kind)
	}
	b = append(b, "\n      }"...)
	b = appendBoolField(b, field+"repositoryControlled\": ", r.RepositoryControlled)
	if r.RepositoryReason != "" {
		b = appendStringField(b, field+"repositoryReason\": ", r.RepositoryReason)
	}
	b = appendBoolField(b, field+"adapterLoads\": ", r.AdapterLoads)
	if r.Digest != "" {
		b = appendStringField(b, field+"digest\": ", r.Digest)
	}
	if len(r.MissingEnv) > 0 {
		b = appendStrings(b, field+"missingEnv\": [", r.MissingEnv)
	}
	if r.MissingCommand != "" {
		b = appendStringField(b, field+"missingCommand\": ", r.MissingCommand)
	}
	if len(r.Hints) > 0 {
		b = appendStrings(b, field+"hints\": [", r.Hints)
	}
	return append(b, "\n    }"...)
}

func appendStringField(b []byte, key, v string) []byte {
	return jsonc.AppendString(append(b, key...), v)
}

func appendBoolField(b []byte, key string, v bool) []byte {
	b = append(b, key...)
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// appendStrings appends a non-empty array of strings, one a line, after
// key (which ends in its [).
func appendStrings(b []byte, key string, vs []string) []byte {
	b = append(b, key...)
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n        "...)
		b = jsonc.AppendString(b, v)
	}
	return append(b, "\n      ]"...)
}
