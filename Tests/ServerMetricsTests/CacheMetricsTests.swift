@testable import ChecklistServer
@testable import ChecklistStorage
import ChecklistWire
import Testing

/// The list cache's figures at /metrics (PostgreSQL only; not in STATS).
@Suite(.timeLimit(.minutes(10))) struct CacheMetricsTests {
    @Test func prometheusTextHasTheCacheFiguresOnlyWithACache() {
        let r = StatsReport()
        #expect(!PrometheusText.render(r).contains("cache"))
        let status = ListCache.Status(maxBytes: 64 << 20, residentBytes: 1000, residentLists: 3, loads: 7, loadFailures: 1,
                                      evictions: 4, loadNanoseconds: 2_500_000_000, maxLoadNanoseconds: 1_250_000, parked: 2)
        let text = PrometheusText.render(r, cache: status)
        for line in ["checklistd_cache_max_bytes 67108864", "checklistd_cache_resident_bytes 1000",
                     "checklistd_cache_resident_lists 3", "checklistd_cache_loads_total 7",
                     "checklistd_cache_load_failures_total 1", "checklistd_cache_evictions_total 4",
                     "checklistd_cache_load_seconds_total 2.500000", "checklistd_cache_load_max_seconds 0.001250",
                     "checklistd_cache_parked_requests 2"] {
            #expect(text.contains("\n" + line + "\n"), "missing \(line)")
        }
    }
}
