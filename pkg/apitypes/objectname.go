package apitypes

import (
	"fmt"
	"strings"
)

// ObjectName is an object as a user names it on the command line:
// TYPE/NAME, or TYPE/NAMESPACE/NAME. TYPE is as kubectl reads it (cm,
// configmaps, deployments.apps); Namespace is "" when not given.
type ObjectName struct {
	Type, Namespace, Name string
}

// String is TYPE/NAME or TYPE/NAMESPACE/NAME, as parsed.
func (o ObjectName) String() string {
	if o.Namespace != "" {
		return o.Type + "/" + o.Namespace + "/" + o.Name
	}
	return o.Type + "/" + o.Name
}

// ParseObjectName reads TYPE/NAME or TYPE/NAMESPACE/NAME: the one rule of
// every command's --object and TYPE/NAME argument. The error says what
// was given and what is wanted; the caller names the flag or argument.
func ParseObjectName(s string) (ObjectName, error) {
	parts := strings.Split(s, "/")
	for _, p := range parts {
		if p == "" {
			parts = nil
			break
		}
	}
	switch len(parts) {
	case 2:
		return ObjectName{Type: parts[0], Name: parts[1]}, nil
	case 3:
		return ObjectName{Type: parts[0], Namespace: parts[1], Name: parts[2]}, nil
	}
	return ObjectName{}, fmt.Errorf("%q is not TYPE/NAME or TYPE/NAMESPACE/NAME (for example cm/settings or cm/shop/settings)", s)
}

// InNamespace returns o in the namespace that -n gave (flagNS, "" when -n
// was not given): o's own namespace when only it has one, the flag's when
// only it does. The two must agree when both are given.
func (o ObjectName) InNamespace(flagNS string) (ObjectName, error) {
	switch {
	case o.Namespace == "":
		o.Namespace = flagNS
	case flagNS != "" && flagNS != o.Namespace:
		return o, fmt.Errorf("%s names namespace %q, -n names %q: give one", o, o.Namespace, flagNS)
	}
	return o, nil
}
