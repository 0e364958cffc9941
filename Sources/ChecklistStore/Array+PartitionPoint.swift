extension Array {
    /// The first index whose element satisfies `belongs`, for an array
    /// where those elements form a suffix (binary search).
    func partitionPoint(_ belongs: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if belongs(self[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}
