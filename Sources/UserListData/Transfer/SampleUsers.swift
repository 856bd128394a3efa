import Foundation
import UserListDomain

/// Deterministic sample people for the demo, the tests and the benchmarks: the same
/// `(count, seed)` always yields the same users (ids included), on every machine.
///
/// Names are varied on purpose: plain ASCII, accented Latin (Zoë, Łukasz), CJK (王芳, 山田太郎,
/// 김민준: two terminal columns per character) and a few with an emoji (also wide, and outside
/// the Basic Multilingual Plane), so that sorting, searching and terminal layout meet real text.
/// Emails are unique (they carry the user's index) and ASCII.
public enum SampleUsers {
    public static func generate(count: Int, seed: UInt64 = 42) -> [User] {
        var random = SplitMix64(seed: seed)
        var users: [User] = []
        users.reserveCapacity(count)
        for index in 0..<count {
            let roll = random.next() % 100
            let name: String
            let slug: String
            if roll < 6 {
                let person = cjk[Int(random.next() % UInt64(cjk.count))]
                (name, slug) = (person.name, person.slug)
            } else {
                let first = firstNames[Int(random.next() % UInt64(firstNames.count))]
                let last = lastNames[Int(random.next() % UInt64(lastNames.count))]
                let emoji = roll < 9 ? " " + emojis[Int(random.next() % UInt64(emojis.count))] : ""
                name = "\(first.name) \(last.name)\(emoji)"
                slug = "\(first.slug).\(last.slug)"
            }
            let domain = domains[Int(random.next() % UInt64(domains.count))]
            let email = "\(slug).\(String(index, radix: 36))@\(domain)"
            let avatar = random.next() % 10 < 7 ? "https://avatars.example.com/\(String(index, radix: 36)).png" : nil
            users.append(User(id: random.uuid(), name: name, email: email, avatarURL: avatar, version: 1))
        }
        return users
    }

    private static let firstNames: [(name: String, slug: String)] = [
        ("Ada", "ada"), ("Alan", "alan"), ("Grace", "grace"), ("Linus", "linus"), ("Margaret", "margaret"),
        ("Dennis", "dennis"), ("Barbara", "barbara"), ("Ken", "ken"), ("Frances", "frances"), ("Edsger", "edsger"),
        ("Zoë", "zoe"), ("José", "jose"), ("Łukasz", "lukasz"), ("Søren", "soren"), ("Çağla", "cagla"),
        ("Renée", "renee"), ("Małgorzata", "malgorzata"), ("Jürgen", "jurgen"), ("Ångel", "angel"),
        ("Chloé", "chloe"),
        ("Nuño", "nuno"), ("Dvořák", "dvorak"), ("Ingrid", "ingrid"), ("Olúwadámilọ́lá", "oluwadamilola"),
        ("Priya", "priya"),
        ("Mohammed", "mohammed"), ("Fatima", "fatima"), ("Yusuf", "yusuf"), ("Aroha", "aroha"), ("Siobhán", "siobhan"),
        ("émile", "emile"), ("bob", "bob"), ("DJ", "dj"), ("Ólafur", "olafur"), ("Þóra", "thora"),
        ("Nguyễn", "nguyen"), ("Anaïs", "anais"), ("Kateřina", "katerina"), ("Σοφία", "sofia"),
        ("Дмитрий", "dmitri"),
    ]

    private static let lastNames: [(name: String, slug: String)] = [
        ("Lovelace", "lovelace"), ("Turing", "turing"), ("Hopper", "hopper"), ("Torvalds", "torvalds"),
        ("Hamilton", "hamilton"), ("Ritchie", "ritchie"), ("Liskov", "liskov"), ("Thompson", "thompson"),
        ("Allen", "allen"), ("Dijkstra", "dijkstra"), ("Müller", "muller"), ("García", "garcia"),
        ("Kowalczyk", "kowalczyk"), ("Kierkegaard", "kierkegaard"), ("Öztürk", "ozturk"), ("Lefèvre", "lefevre"),
        ("Wiśniewska", "wisniewska"), ("Søndergaard", "sondergaard"), ("Núñez", "nunez"), ("Brontë", "bronte"),
        ("O'Brien", "obrien"), ("van der Berg", "vanderberg"), ("de la Cruz", "delacruz"), ("Smith", "smith"),
        ("Adeyemi", "adeyemi"), ("Haddad", "haddad"), ("Patel", "patel"), ("Ngata", "ngata"),
        ("Ó Súilleabháin", "osullivan"),
        ("Jónsdóttir", "jonsdottir"), ("Trần", "tran"), ("Novák", "novak"),
        ("Παπαδοπούλου", "papadopoulou"), ("Иванов", "ivanov"),
    ]

    private static let cjk: [(name: String, slug: String)] = [
        ("王芳", "wang.fang"), ("李伟", "li.wei"), ("张敏", "zhang.min"), ("陈静", "chen.jing"),
        ("山田太郎", "yamada.taro"), ("佐藤花子", "sato.hanako"), ("鈴木一郎", "suzuki.ichiro"),
        ("高橋さくら", "takahashi.sakura"),
        ("김민준", "kim.minjun"), ("이서연", "lee.seoyeon"), ("박지훈", "park.jihoon"),
        ("최유나", "choi.yuna"),
    ]

    private static let emojis = ["🚀", "🌻", "🎸", "🦊", "👩🏽‍💻", "🇳🇿", "☕️", "🐙"]

    private static let domains = ["example.com", "example.org", "mail.example.net", "users.example.io"]
}

/// A small, fast, seedable generator (SplitMix64, Steele et al. 2014): deterministic across
/// platforms, unlike `SystemRandomNumberGenerator`.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A version-4 UUID from the generator's bits.
    mutating func uuid() -> UUID {
        let a = next(), b = next()
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: a >> (8 * UInt64(i)))
            bytes[8 + i] = UInt8(truncatingIfNeeded: b >> (8 * UInt64(i)))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
