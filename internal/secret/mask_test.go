package secret

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMask(t *testing.T) {
	t.Parallel()
	in := map[string]any{
		"command": "npx",
		"args": []any{
			"-y", "@acme/disk-usage@1.2.3",
			"--api-key=" + fakeOpenAI,
			"--header", "Authorization: Bearer " + fakeRandom32,
			"--header", "Authorization: Bearer ${TOKEN}",
			"https://deploy:" + fakePassword + "@git.example.com/x.git",
			fakeUUID(300),
		},
		"env": map[string]any{
			"GITHUB_TOKEN":    "${GITHUB_TOKEN}",
			"OTHER":           "$env:OTHER",
			"BRACED":          "{env:BRACED}",
			"PLAIN_SECRET":    fakePassword,
			"LOG_LEVEL":       "debug",
			"FROM_COMMAND":    "!gh auth token",
			"BAD_COMMAND":     "!echo " + fakeGHP,
			"ESCAPED":         "!!literal",
			"EMPTY":           "",
			"NUMBER":          float64(1234),
			"AUTH_WITH_REFS":  "Bearer ${TOKEN}",
			"REFS_AND_STRING": "x${TOKEN}",
		},
		"headers": map[string]any{
			"Authorization": "Bearer ${TOKEN}",
			"X-Api-Key":     fakeRandom64,
			"X-Literal":     "Bearer abc",
		},
		"url":            "https://user:" + fakePassword + "@mcp.example.com/mcp",
		"bearerToken":    fakeJWTValue,
		"bearerTokenEnv": "MCP_TOKEN",
		"auth":           "bearer",
		"oauth": map[string]any{
			"clientId":     "my-client",
			"clientSecret": fakePassword,
			"scope":        "read write",
		},
		"requestHeadersCommand": map[string]any{
			"command": "get-headers",
			"args":    []any{"--profile", "work"},
			"env":     map[string]any{"PROFILE": "work", "TOKEN": "${T}"},
		},
		"lifecycle":   "lazy",
		"idleTimeout": float64(10),
		"disabled":    false,
		"apiKey":      "literal-in-unknown-field",
		"cwd":         "/home/alice/project",
	}
	want := map[string]any{
		"command": "npx",
		"args": []any{
			"-y", "@acme/disk-usage@1.2.3",
			Masked,
			"--header", Masked,
			"--header", "Authorization: Bearer ${TOKEN}",
			"https://deploy:****@git.example.com/x.git",
			fakeUUID(300),
		},
		"env": map[string]any{
			"GITHUB_TOKEN":    "${GITHUB_TOKEN}",
			"OTHER":           "$env:OTHER",
			"BRACED":          "{env:BRACED}",
			"PLAIN_SECRET":    Masked,
			"LOG_LEVEL":       Masked,
			"FROM_COMMAND":    "!gh auth token",
			"BAD_COMMAND":     Masked,
			"ESCAPED":         Masked,
			"EMPTY":           "",
			"NUMBER":          Masked,
			"AUTH_WITH_REFS":  "Bearer ${TOKEN}",
			"REFS_AND_STRING": Masked,
		},
		"headers": map[string]any{
			"Authorization": "Bearer ${TOKEN}",
			"X-Api-Key":     Masked,
			"X-Literal":     Masked,
		},
		"url":            "https://user:****@mcp.example.com/mcp",
		"bearerToken":    Masked,
		"bearerTokenEnv": "MCP_TOKEN",
		"auth":           "bearer",
		"oauth": map[string]any{
			"clientId":     "my-client",
			"clientSecret": Masked,
			"scope":        "read write",
		},
		"requestHeadersCommand": map[string]any{
			"command": "get-headers",
			"args":    []any{"--profile", "work"},
			"env":     map[string]any{"PROFILE": Masked, "TOKEN": "${T}"},
		},
		"lifecycle":   "lazy",
		"idleTimeout": float64(10),
		"disabled":    false,
		"apiKey":      Masked,
		"cwd":         "/home/alice/project",
	}
	before, _ := json.Marshal(in)
	got := Mask(in)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Mask (-want +got):\n%s", diff)
	}
	after, _ := json.Marshal(in)
	if string(before) != string(after) {
		t.Errorf("Mask changed its input")
	}
	out, _ := json.Marshal(got)
	for _, s := range []string{fakeOpenAI, fakeRandom32, fakeRandom64, fakePassword, fakeGHP, fakeJWTValue} {
		if strings.Contains(string(out), s) {
			t.Errorf("Mask output holds a secret")
		}
	}
	// The copy is deep.
	got["env"].(map[string]any)["GITHUB_TOKEN"] = "changed"
	got["args"].([]any)[0] = "changed"
	if in["env"].(map[string]any)["GITHUB_TOKEN"] != "${GITHUB_TOKEN}" || in["args"].([]any)[0] != "-y" {
		t.Errorf("Mask shares structure with its input")
	}
	if Mask(nil) != nil {
		t.Errorf("Mask(nil) != nil")
	}
}

func TestMaskOddShapes(t *testing.T) {
	t.Parallel()
	in := map[string]any{
		"env":                   []any{"A=" + fakePassword},
		"headers":               "not a map",
		"oauth":                 false,
		"requestHeadersCommand": "odd",
		"nested":                map[string]any{"deep": []any{map[string]any{"password": "hunter2", "x": fakeNPM}}},
	}
	want := map[string]any{
		"env":                   Masked,
		"headers":               Masked,
		"oauth":                 false,
		"requestHeadersCommand": "odd",
		"nested":                map[string]any{"deep": []any{map[string]any{"password": Masked, "x": Masked}}},
	}
	if diff := cmp.Diff(want, Mask(in)); diff != "" {
		t.Errorf("Mask (-want +got):\n%s", diff)
	}
}
