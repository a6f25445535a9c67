// pwflags-bench's start-up floor: a Swift program that does nothing, linked as pwflagsd is (the Swift runtime
// statically in a release build), so that exec to exit is what the runtime and the dynamic loader cost alone.
// `pwflags-bench` starts it from the directory it runs from and compares pwflagsd's exec to READY=1 against it.
