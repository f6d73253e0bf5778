package src

func inATest() {
	_ = 1
}
