package conflicts

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestForbiddenBody: a 403 whose body client-go could not decode keeps
// the server's message (a JSON Status or text), and stays a 403.
func TestForbiddenBody(t *testing.T) {
	unknown := apierrors.NewForbidden(schema.GroupResource{}, "", errors.New("unknown"))
	for _, tc := range []struct{ body, want string }{
		{`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"forbidden: User \"u\" cannot get path \"/metrics\"","reason":"Forbidden","code":403}`, `forbidden: User "u" cannot get path "/metrics"`},
		{"forbidden: User \"u\" cannot get path \"/metrics\"\n", `forbidden: User "u" cannot get path "/metrics"`},
		{"", unknown.Error()},
	} {
		err := forbiddenBody(unknown, []byte(tc.body))
		if !apierrors.IsForbidden(err) || err.Error() != tc.want {
			t.Errorf("body %q: got %v (forbidden %v), want %q", tc.body, err, apierrors.IsForbidden(err), tc.want)
		}
	}
}
