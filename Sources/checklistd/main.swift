print("checklistd")
