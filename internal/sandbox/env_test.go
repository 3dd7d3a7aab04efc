package sandbox

import (
	"slices"
	"testing"
)

func TestCredentialName(t *testing.T) {
	for name, want := range map[string]bool{
		"ANTHROPIC_API_KEY": true, "OPENAI_API_KEY": true, "AWS_SECRET_ACCESS_KEY": true, "AWS_PROFILE": true, "GITHUB_TOKEN": true,
		"NPM_TOKEN": true, "DB_PASSWORD": true, "GOOGLE_APPLICATION_CREDENTIALS": true, "MY_SECRET_THING": true, "SSH_AUTH_SOCK": false,
		"PATH": false, "HOME": false, "GIT_AUTHOR_NAME": false, "LANG": false, "GOPROXY": false, "STRIPE_KEY": true, "HF_TOKEN": true,
	} {
		if CredentialName(name) != want {
			t.Errorf("CredentialName(%q) = %v", name, !want)
		}
	}
}

func TestFilterEnv(t *testing.T) {
	env := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "ANTHROPIC_API_KEY=k", "GITHUB_TOKEN=t", "RANDOM_THING=x", "SSH_AUTH_SOCK=/s", "noequals"}
	got := FilterEnv(env, []string{"GITHUB_TOKEN"})
	want := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "GITHUB_TOKEN=t"}
	if !slices.Equal(got, want) {
		t.Errorf("FilterEnv = %v, want %v", got, want)
	}
}

// TestFilterEnvDefaultsStillNoCredentials: a name from a family kept by
// default (LC_*) that looks like a credential does not pass unless the
// person names it (issue 41, mutation V-credential).
func TestFilterEnvDefaultsStillNoCredentials(t *testing.T) {
	env := []string{"LC_ALL=C", "LC_API_TOKEN=t", "LC_SECRET=s", "LC_CTYPE=C.UTF-8"}
	if got, want := FilterEnv(env, nil), []string{"LC_ALL=C", "LC_CTYPE=C.UTF-8"}; !slices.Equal(got, want) {
		t.Errorf("FilterEnv = %v, want %v", got, want)
	}
	if got, want := FilterEnv(env, []string{"LC_SECRET"}), []string{"LC_ALL=C", "LC_SECRET=s", "LC_CTYPE=C.UTF-8"}; !slices.Equal(got, want) {
		t.Errorf("FilterEnv with LC_SECRET named = %v, want %v", got, want)
	}
}
