import ChecklistModel
import ChecklistStore

/// The demo lists the iOS checklist apps seed on first launch, so that a
/// fresh `checklistd --seed-demo` looks like a fresh app (docs/DOMAIN.md).
public enum DemoData {
    static let lists: [(name: String, icon: String, items: [(String, Bool)])] = [
        ("Birthdays", "Birthdays", [("Buy a present for Mum", false), ("Book the restaurant", true)]),
        ("Groceries", "Groceries", [("Milk", false), ("Eggs", true), ("Bread", false)]),
        ("Cool Apps", "Photos", [("Learn iOS development", false)]),
        ("To Do", "Chores", [("Walk the dog", false), ("Brush my teeth", true),
                             ("Soccer practice", false), ("Eat ice cream", true)]),
    ]

    /// Fills `namespace` with the demo lists when it has no lists yet.
    /// Returns whether it seeded.
    @discardableResult
    public static func seedIfEmpty(_ store: Store, namespace: Namespace = .default) throws -> Bool {
        guard store.lists(in: namespace).isEmpty else { return false }
        for list in lists {
            let summary = try store.createList(in: namespace, name: list.name, icon: list.icon)
            let ops = list.items.map { text, checked in
                PatchOperation.insert(tempRef: nil, position: .end, fields: ItemFields(text: text, checked: checked))
            }
            _ = try store.patch(in: namespace, list: summary.id, baseRevision: nil, ops: ops)
        }
        return true
    }
}
