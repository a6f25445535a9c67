print("pwflags")
