import Foundation
import Testing
import UserListTestSupport
import UserListDomain
import UserListPresentation

/// A fixed id, so failures print the same values on every run.
func userID(_ n: Int) -> UUID {
    UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", n))!
}

func user(_ n: Int, _ name: String, version: Int = 1) -> User {
    User(id: userID(n), name: name, email: "\(name.lowercased().replacingOccurrences(of: " ", with: "."))@example.com",
         version: version)
}

/// `count` users named "User 00", "User 01", … (ids 0, 1, …): name order is id order.
func numberedUsers(_ count: Int) -> [User] {
    (0..<count).map { user($0, String(format: "User %02d", $0)) }
}

let ada = user(101, "Ada Lovelace")
let bob = user(102, "Bob Dylan")
let cleo = user(103, "Cleo Laine")
let dora = user(104, "Dora Maar")

/// A list ViewModel over `repository` whose every published state is recorded.
func makeList(
    _ repository: FakeUserRepository, pageSize: Int = 50
) -> (UserListViewModel, StateRecorder<UserListState>, EventLog<UserListEvent>) {
    let list = UserListViewModel(useCases: UserUseCases(repository: repository), pageSize: pageSize)
    let recorder = StateRecorder(list.state)
    let events = EventLog<UserListEvent>()
    list.onStateChange = { [unowned list] in recorder.record(list.state) }
    list.onEvent = { events.append($0) }
    return (list, recorder, events)
}

func makeDetail(
    _ repository: FakeUserRepository, id: UUID
) -> (UserDetailViewModel, StateRecorder<UserDetailState>, EventLog<UserDetailEvent>) {
    let detail = UserDetailViewModel(userID: id, useCases: UserUseCases(repository: repository))
    let recorder = StateRecorder(detail.state)
    let events = EventLog<UserDetailEvent>()
    detail.onStateChange = { [unowned detail] in recorder.record(detail.state) }
    detail.onEvent = { events.append($0) }
    return (detail, recorder, events)
}

/// One-shot events in the order they were sent.
final class EventLog<Event> {
    private(set) var all: [Event] = []
    /// Beats after every event.
    let changes = Pulse()

    func append(_ event: Event) {
        all.append(event)
        changes.beat()
    }

    /// Waits until `count` events have been sent.
    func awaitCount(
        _ count: Int, isolation: isolated (any Actor) = #isolation,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        await changes.expect(isolation: isolation, sourceLocation: sourceLocation) { self.all.count == count }
    }
}
