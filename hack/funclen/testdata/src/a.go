package src

func short() {}

type T[K comparable] struct{}

func (t *T[K]) method() {
	f := func() {
		_ = 1
	}
	f()
}

func decl()
