// Package hack holds the tests of the shell scripts beside it (the scripts
// are the build, release and benchmark helpers listed in the README's
// development table); it has no code of its own.
package hack
