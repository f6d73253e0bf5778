// Package cmdutil is what kubectl rv's commands share: the Factory over
// kubectl's global flags (clients, the namespace, the server for
// messages), the root command's set-up (SetUpRoot: global flags, klog's
// -v, completion, the server's warnings, exit codes by HandleError), the
// flags several commands bind (OutputFlags, SelectionFlags, --fail-on,
// --report), the runner that takes a command's options from flags to Run
// (RunE), the one TYPE[/NAME] resolver (ResolveType, ResolveTypeNameArgs;
// live discovery, or OfflineMapper over objects read from files) and
// shell completion.
//
// It holds no command: each command is its own package beside it
// (pkg/cmd/<command>), and pkg/cmd assembles them.
package cmdutil
