print("checklist")
