import Testing
import UserListDomain

/// A session tells its own changes from others' by the receipt's range, and waits for the feed
/// through its end: both must hold whatever order the store records in.
@Suite struct CommitReceiptTests {
    @Test func nothingRecordedIsNoRangeAndCoversNothing() {
        let receipt = CommitReceipt()
        #expect(receipt.seqs == nil)
        #expect(!receipt.covers(1))
        receipt.record(0)  // not a log position
        #expect(receipt.seqs == nil)
    }

    @Test func theRangeRunsFromTheFirstRecordedToTheHighest() {
        let receipt = CommitReceipt()
        receipt.record(41)
        receipt.record(43)
        receipt.record(42)
        #expect(receipt.seqs == 41...43)
        #expect(receipt.covers(42) && !receipt.covers(40) && !receipt.covers(44))
    }

    @Test func theStoreSeesTheReceiptOfTheTaskThatWrites() async {
        let receipt = CommitReceipt()
        let store = { @Sendable (seq: Int) in CommitReceipt.current?.record(seq) }
        store(7)  // no receipt current: nobody asked
        await CommitReceipt.$current.withValue(receipt) {
            await Task { store(9) }.value  // a task a ViewModel starts inherits it
        }
        #expect(receipt.seqs == 9...9)
    }
}
