print("pwflagsd")
