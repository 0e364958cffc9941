#!/usr/bin/env python3
"""The apps' files made by a second implementation (Python's plistlib), for
the integration tests of `checklist import`/`export` (TransferCLITests).

    app_files.py write DIR    writes DIR/seed.plist, DIR/items.plist and
                              DIR/Checklists.plist (see below)
    app_files.py read FILE    reads a Shopping List keyed archive the way the
                              app's NSKeyedUnarchiver would (checking the
                              envelope and classes) and prints its items as
                              JSON: [{"uuid", "name", "price", "inShoppingList"}]

The archives are built object by object from the NSKeyedArchiver format
($archiver, $version, $top, $objects with "$null" first, UIDs, class
dictionaries), independently of the Swift reader and writer.
"""
import datetime, json, plistlib, struct, sys

def f32(x):
    """x as encodeFloat stores it (a 32-bit float), read back as a double."""
    return struct.unpack(">f", struct.pack(">f", x))[0]

class Archive:
    def __init__(self):
        self.objects = ["$null"]
        self.classes = {}
    def add(self, obj):
        self.objects.append(obj)
        return plistlib.UID(len(self.objects) - 1)
    def cls(self, name, supers):
        if name not in self.classes:
            self.classes[name] = self.add({"$classname": name, "$classes": [name] + supers})
        return self.classes[name]
    def array(self, uids, mutable=False):
        name = "NSMutableArray" if mutable else "NSArray"
        supers = ["NSArray", "NSObject"] if mutable else ["NSObject"]
        return self.add({"NS.objects": uids, "$class": self.cls(name, supers)})
    def date(self, since1970):
        return self.add({"NS.time": float(since1970 - 978307200), "$class": self.cls("NSDate", ["NSObject"])})
    def bytes(self, top):
        return plistlib.dumps({"$archiver": "NSKeyedArchiver", "$version": 100000, "$top": top,
                               "$objects": self.objects}, fmt=plistlib.FMT_BINARY)

# The Shopping List app's items.plist: NSKeyedArchiver.archiveRootObject([Item]).
SHOPPING = [
    ("6F9619FF-8B86-D011-B42D-00C04FC964FF", "Milk", 2.99, True),
    ("0E984725-C51C-4BF4-9960-E1C80E27ABA0", "Crème fraîche", 1.25, False),
    ("A3BB189E-8BF9-3888-9912-ACE4E6543002", "Milk", 0.125, True),   # the same name: one shared string object
    ("C56A4180-65AA-42EC-A945-5FD21DEC0538", "Bread", 10.0, False),
]

def items_plist():
    a = Archive()
    root = a.add(None)
    cls = a.cls("Shopping_List.Item", ["NSObject"])
    names = {}
    refs = []
    for uuid, name, price, listed in SHOPPING:
        item = {"$class": cls, "uuid": a.add(uuid), "price": f32(price), "inShoppingList": listed}
        if name not in names:
            names[name] = a.add(name)
        item["name"] = names[name]
        refs.append(a.add(item))
    a.objects[root.data] = {"NS.objects": refs, "$class": a.cls("NSArray", ["NSObject"])}
    return a.bytes({"root": root})

# The app's bundled seed.plist: an XML array of {name, price}.
SEED = [("Eggs", 2.99), ("Bananas", 0.5), ("Coffee", 7.005)]

def seed_plist():
    return plistlib.dumps([{"name": n, "price": p} for n, p in SEED], fmt=plistlib.FMT_XML)

# Older Checklists editions: [archiver encodeObject:lists forKey:@"Checklists"].
OLD_LISTS = [
    ("Birthdays", "Birthdays", "Checklist", [("Anna", False, 1767225600, True, 0), ("Bob", True, 1767312000, False, 3)]),
    ("Groceries", "Groceries", "Checklists.Checklist", [("Milk", True, 1700000000, False, 1)]),
    ("Empty", "No Icon", "Checklist", []),
]

def checklists_plist():
    a = Archive()
    lists = []
    for name, icon, cname, items in OLD_LISTS:
        icls = a.cls(cname + "Item", ["NSObject"])
        refs = [a.add({"$class": icls, "Text": a.add(text), "Checked": checked, "DueDate": a.date(due),
                       "ShouldRemind": remind, "ItemID": item_id})
                for text, checked, due, remind, item_id in items]
        lists.append(a.add({"$class": a.cls(cname, ["NSObject"]), "Name": a.add(name), "IconName": a.add(icon),
                            "Items": a.array(refs, mutable=True)}))
    top = a.array(lists, mutable=True)
    return a.bytes({"Checklists": top})

def read(path):
    archive = plistlib.load(open(path, "rb"))
    assert archive["$archiver"] == "NSKeyedArchiver", archive["$archiver"]
    assert archive["$version"] == 100000
    objects = archive["$objects"]
    assert objects[0] == "$null"
    def obj(uid):
        assert isinstance(uid, plistlib.UID), uid
        return objects[uid.data]
    root = obj(archive["$top"]["root"])
    root_class = obj(root["$class"])
    assert root_class["$classname"] in ("NSArray", "NSMutableArray") and "NSArray" in root_class["$classes"], root_class
    out = []
    for ref in root["NS.objects"]:
        item = obj(ref)
        cls = obj(item["$class"])
        assert cls["$classname"] == "Shopping_List.Item" and cls["$classes"][-1] == "NSObject", cls
        uuid, name = obj(item["uuid"]), obj(item["name"])
        assert isinstance(uuid, str) and isinstance(name, str)
        assert isinstance(item["price"], float) and isinstance(item["inShoppingList"], bool)
        out.append({"uuid": uuid, "name": name, "price": item["price"], "inShoppingList": item["inShoppingList"]})
    print(json.dumps(out))

if __name__ == "__main__":
    if sys.argv[1] == "write":
        d = sys.argv[2]
        open(d + "/seed.plist", "wb").write(seed_plist())
        open(d + "/items.plist", "wb").write(items_plist())
        open(d + "/Checklists.plist", "wb").write(checklists_plist())
    elif sys.argv[1] == "read":
        read(sys.argv[2])
    else:
        sys.exit("usage: app_files.py write DIR | read FILE")
